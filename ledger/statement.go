package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/instructions"

	"github.com/atomledger/atomledger/stored"
)

// Bounds of a statement page (DESIGN.md, daemon table).
const (
	DefaultStatementLimit = 100
	MaxStatementLimit     = 1000
)

// Statement is one page of a holder's applied instructions, oldest first.
// A hot holder's merges its lanes' histories in the feed's order, each
// event naming its lane (AppliedInstruction.Lane), and pages by a cursor
// (Next) instead of a seq.
type Statement struct {
	Holder string               `json:"holder"`
	Events []AppliedInstruction `json:"events"`
	// NextAfterSeq, when not zero, is the after_seq of the next page: the
	// ledger has more instructions past this page. Never on a hot holder's.
	NextAfterSeq int64 `json:"next_after_seq,omitempty"`
	// Next, on a hot holder's statement, is the cursor to read the next page
	// after (StatementAfter), when the ledger has more past this page.
	Next string `json:"next,omitempty"`
}

// AppliedInstruction is an instruction as the ledger recorded it, amounts in
// decimals at the asset registry's scales (points at scale 0; an asset that
// left the registry in minor units rather than hidden).
type AppliedInstruction struct {
	ID string `json:"id"`
	// Lane is the lane of a hot holder the instruction applied on, 1 to 63;
	// absent for lane 0 (the holder itself) and for a plain holder's.
	Lane int   `json:"lane,omitempty"`
	Seq  int64 `json:"seq"` // the lane's own seq

	TsMs         int64         `json:"ts_ms"` // Redis server time, Unix ms
	Counterparty string        `json:"counterparty"`
	Memo         string        `json:"memo,omitempty"`
	Transfer     string        `json:"transfer,omitempty"` // the transfer this is a part's step of
	Ops          []StatementOp `json:"ops"`
}

// StatementOp is one op of an applied instruction with what it moved.
type StatementOp struct {
	Op     string `json:"op"`
	Asset  string `json:"asset,omitempty"` // the asset, or a settle's or release's leg
	Amount string `json:"amount,omitempty"`
	Hold   string `json:"hold,omitempty"`
	Coupon string `json:"coupon,omitempty"`
	ToHold string `json:"to_hold,omitempty"` // a transfer's take and give: the hold the amount goes to
	Lanes  int    `json:"lanes,omitempty"`   // open with lanes, set_lanes: the hot holder's lane count
	Whole  bool   `json:"whole,omitempty"`   // a transfer's close: its part settled the hold whole
	// Movements are what the op moved between the holder's available and
	// frozen accounts and the counterparty; empty for an op that moves no
	// value (open, coupons, a take that keeps funds frozen).
	Movements []Movement `json:"movements"`
}

// Movement is one amount moving from one account to another: "available"
// and "frozen" are the holder's, "counterparty" the instruction's
// counterparty.
type Movement struct {
	Asset  string `json:"asset"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount string `json:"amount"`
}

// statementQuery reads a page; the primary key (holder, seq) serves it, so
// a page costs the same at the start of a long history as at its end
// (docs/ledger.md shows the plan).
const statementQuery = `SELECT id, seq, ts_ms, counterparty, memo, coalesce(transfer, ''), ops
	FROM ledger.events WHERE holder = $1 AND seq > $2 ORDER BY seq LIMIT $3`

// instructionQuery reads the latest instruction under an id (an id may come
// back after Redis forgot it). It finds the seq in ledger.instructions, where
// a row that stores its id whole (every one but the transfer parts whose id
// ledger.events derives, stored with an empty counterparty) is found through the
// index (holder, id); a derived part's id, which that index leaves out,
// through the index on transfer ($3, the transfer its id names), matched as
// ledger.events gives it back. Then it reads that one event.
const instructionQuery = `SELECT id, seq, ts_ms, counterparty, memo, coalesce(transfer, ''), ops FROM ledger.events
	WHERE holder = $1 AND seq = (SELECT max(seq) FROM (
		SELECT seq FROM ledger.instructions WHERE holder = $1 AND id = $2 AND (counterparty <> '' OR transfer IS NULL)
		UNION ALL
		SELECT seq FROM ledger.instructions WHERE transfer = $3 AND holder = $1
			AND $2 = CASE WHEN counterparty = '' THEN 'x:' || transfer || id ELSE id END) AS s)`

// Statement reads the holder's applied instructions from seq afterSeq+1,
// oldest first, at most limit of them (0: DefaultStatementLimit). Only what
// the relay has delivered is there: Redis may be ahead. A hot holder's
// statement merges its lanes' (see Statement): afterSeq is then lane 0's,
// every other lane read from its first; StatementAfter reads its next pages.
//
// Errors: INVALID_ID; INVALID_INSTRUCTION (afterSeq below 0, limit outside
// 0..MaxStatementLimit); HOLDER_NOT_FOUND when the ledger has nothing of the
// holder; a plain error when PostgreSQL fails.
func (l *Ledger) Statement(ctx context.Context, holder string, afterSeq int64, limit int) (Statement, error) {
	if err := checkHolder(holder); err != nil {
		return Statement{}, err
	}
	if afterSeq < 0 {
		return Statement{}, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"after_seq %d: want a seq, 0 or more", afterSeq)
	}
	return l.statement(ctx, holder, stmtCursor{afterSeq}, limit)
}

// StatementAfter reads the page of a hot holder's statement after the
// cursor after, a page's Next (see Statement); at most limit events (0:
// DefaultStatementLimit).
//
// Errors: those of Statement; INVALID_INSTRUCTION for a cursor that is not
// a Next of a hot holder's statement.
func (l *Ledger) StatementAfter(ctx context.Context, holder, after string, limit int) (Statement, error) {
	c, err := parseStmtCursor(after)
	if err != nil {
		return Statement{}, err
	}
	return l.statement(ctx, holder, c, limit)
}

// statement reads a page after c: a plain holder's after c[0], a hot
// holder's merged.
func (l *Ledger) statement(ctx context.Context, holder string, c stmtCursor, limit int) (Statement, error) {
	if err := checkHolder(holder); err != nil {
		return Statement{}, err
	}
	if limit == 0 {
		limit = DefaultStatementLimit
	}
	if limit < 1 || limit > MaxStatementLimit {
		return Statement{}, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"limit %d: want 1 to %d", limit, MaxStatementLimit)
	}
	lanes, err := l.lanesOf(ctx, holder)
	if err != nil {
		return Statement{}, fmt.Errorf("ledger statement: %w", err)
	}
	var st Statement
	if len(lanes) > 0 {
		st, err = l.mergedStatement(ctx, holder, lanes, c, limit)
	} else {
		st, err = l.plainStatement(ctx, holder, c[0], limit)
	}
	if err != nil || len(st.Events) > 0 {
		return st, err
	}
	var known bool
	if err := l.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM ledger.holders WHERE holder = $1)", holder).Scan(&known); err != nil {
		return Statement{}, fmt.Errorf("ledger statement: %w", err)
	}
	if !known {
		return Statement{}, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp,
			"the ledger has no instruction of holder %s", holder)
	}
	st.Events = []AppliedInstruction{}
	return st, nil
}

// plainStatement reads a page of a plain holder's statement.
func (l *Ledger) plainStatement(ctx context.Context, holder string, afterSeq int64, limit int) (Statement, error) {
	// One more than asked tells whether there is a next page.
	rows, err := l.pool.Query(ctx, statementQuery, holder, afterSeq, limit+1)
	if err != nil {
		return Statement{}, fmt.Errorf("ledger statement: %w", err)
	}
	evs, err := pgx.CollectRows(rows, l.scanApplied)
	if err != nil {
		return Statement{}, fmt.Errorf("ledger statement: %w", err)
	}
	st := Statement{Holder: holder, Events: evs}
	if len(evs) > limit {
		st.Events = evs[:limit]
		st.NextAfterSeq = evs[limit-1].Seq
	}
	return st, nil
}

// Instruction reads the applied instruction id of holder, the latest if the
// id was used again after Redis forgot it. Under a hot holder it is found on
// whichever lane it applied (AppliedInstruction.Lane), the latest in the
// feed's order.
//
// Errors: INVALID_ID; INSTRUCTION_NOT_FOUND (the ledger has no applied
// instruction under the id: never applied, rejected, or not relayed yet); a
// plain error when PostgreSQL fails.
func (l *Ledger) Instruction(ctx context.Context, holder, id string) (AppliedInstruction, error) {
	if err := checkHolder(holder); err != nil {
		return AppliedInstruction{}, err
	}
	if err := instructions.CheckID(instructions.NoOp, "instruction id", id); err != nil {
		return AppliedInstruction{}, err
	}
	lanes, err := l.lanesOf(ctx, holder)
	if err != nil {
		return AppliedInstruction{}, fmt.Errorf("ledger instruction: %w", err)
	}
	var a AppliedInstruction
	if len(lanes) > 0 {
		a, err = l.mergedInstruction(ctx, holder, lanes, id)
	} else {
		a, err = l.plainInstruction(ctx, holder, id)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		e := instructions.Errorf(instructions.CodeInstructionNotFound, instructions.NoOp,
			"the ledger has no applied instruction %q of holder %s", id, holder)
		e.ID = id
		return AppliedInstruction{}, e
	}
	if err != nil {
		return AppliedInstruction{}, fmt.Errorf("ledger instruction: %w", err)
	}
	return a, nil
}

// plainInstruction looks id up on a plain holder.
func (l *Ledger) plainInstruction(ctx context.Context, holder, id string) (AppliedInstruction, error) {
	rows, err := l.pool.Query(ctx, instructionQuery, holder, id, partTransfer(id))
	if err != nil {
		return AppliedInstruction{}, err
	}
	return pgx.CollectExactlyOneRow(rows, l.scanApplied)
}

// partTransfer gives the transfer whose part's id is id
// (x:<transfer>:<step>), or "". The index by id leaves out the parts whose
// id is derived (migrations 7 and 8): instructionQuery finds them through
// their transfer.
func partTransfer(id string) string {
	t, ok := strings.CutPrefix(id, "x:")
	if i := strings.LastIndexByte(t, ':'); ok && i > 0 {
		return t[:i]
	}
	return ""
}

func checkHolder(holder string) error { return checkID("holder", holder) }

func checkID(what, id string) error {
	if err := instructions.CheckID(instructions.NoOp, what, id); err != nil {
		return err // not the nil *Error as a non-nil error
	}
	return nil
}

// scanApplied reads a row of statementQuery or instructionQuery.
func (l *Ledger) scanApplied(row pgx.CollectableRow) (AppliedInstruction, error) {
	var a AppliedInstruction
	return a, l.scanEvent(row, &a)
}

// scanEvent reads into a an applied instruction's columns, id to ops, after
// the columns first.
func (l *Ledger) scanEvent(row pgx.CollectableRow, a *AppliedInstruction, first ...any) error {
	var ops string
	if err := row.Scan(append(first, &a.ID, &a.Seq, &a.TsMs, &a.Counterparty, &a.Memo, &a.Transfer, &ops)...); err != nil {
		return err
	}
	return l.readOps(a, ops)
}

// readOps sets a's ops from the event's ops JSON.
func (l *Ledger) readOps(a *AppliedInstruction, ops string) error {
	var evOps []stored.EventOp
	if err := json.Unmarshal([]byte(ops), &evOps); err != nil {
		return fmt.Errorf("instruction %s of seq %d: ops: %w", a.ID, a.Seq, err)
	}
	a.Ops = make([]StatementOp, len(evOps))
	for i, op := range evOps {
		so := StatementOp{Op: op.Op, Asset: op.Asset, Hold: op.Hold, Coupon: op.Coupon, ToHold: op.To, Movements: []Movement{}}
		switch {
		case op.Op == instructions.OpOpen || op.Op == instructions.OpSetLanes:
			so.Lanes, _ = strconv.Atoi(op.Units)
		case op.Op == instructions.OpClose:
			so.Whole = op.Units == "1"
		case op.Units != "":
			so.Amount = l.amount(op.Asset, op.Units)
		}
		for _, mv := range op.Moves {
			so.Movements = append(so.Movements, Movement{Asset: mv[0], From: sideName[mv[1]], To: sideName[mv[2]], Amount: l.amount(mv[0], mv[3])})
		}
		a.Ops[i] = so
	}
	return nil
}

// sideName names the account sides of a movement for people.
var sideName = map[string]string{stored.SideAvail: "available", stored.SideFrozen: "frozen", stored.SideCP: "counterparty"}

// amount formats minor units of an asset at its scale, as the engine does.
func (l *Ledger) amount(asset, units string) string {
	scale, ok := l.assets.Scale(asset)
	n, err := strconv.ParseInt(units, 10, 64)
	if !ok || err != nil {
		return units
	}
	return instructions.FromUnits(n, scale)
}
