package ledger

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/instructions"
)

// Hot holders (DESIGN.md, Hot holders): lane i (1 to 63) of a hot
// holder X is the holder X#i, with its own seq and digest chain; lane 0 is
// X. The ledger applies a lane's events as any holder's; it knows each
// lane's parent (ledger.holders.parent, migration 11), so that X's
// statement merges its lanes' histories and a lookup under X finds an
// instruction on any of them.

// validHolder tells whether name is a holder's name the ledger may hold: a
// valid id, or a lane of one.
func validHolder(name string) bool {
	p, _ := instructions.ParentOf(name)
	return instructions.ValidID(p)
}

// Lanes lists the lanes the ledger has of the hot holders among holders
// (X#1 ... of X), in name order; none for a plain holder, or a hot one whose
// lanes have no event in the ledger yet. Its cost is one read of the index
// of lanes, whatever the number of holders.
//
// Errors: a plain error when PostgreSQL fails.
func (l *Ledger) Lanes(ctx context.Context, holders []string) ([]string, error) {
	rows, err := l.pool.Query(ctx, `SELECT holder FROM ledger.holders WHERE parent = ANY($1) ORDER BY holder`, holders)
	if err != nil {
		return nil, fmt.Errorf("ledger lanes: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("ledger lanes: %w", err)
	}
	return out, nil
}

const lanesQuery = `SELECT holder FROM ledger.holders WHERE parent = $1`

// lanesOf lists the lanes of holder the ledger has, through the index on
// parent: none while the ledger lacks the holder itself (lane 0), so that
// the lanes an open refused after opening them leaves are no holder's (and
// a hot holder whose lane 0 has no event in yet reads as one on its way).
func (l *Ledger) lanesOf(ctx context.Context, holder string) ([]string, error) {
	rows, err := l.pool.Query(ctx, lanesQuery, holder)
	if err != nil {
		return nil, err
	}
	lanes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(lanes) == 0 {
		return nil, err
	}
	var known bool
	if err := l.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM ledger.holders WHERE holder = $1)", holder).Scan(&known); err != nil || !known {
		return nil, err
	}
	return lanes, nil
}

// A hot holder's statement is its lanes' histories merged in the feed's
// order, (xid, holder, seq). Its cursor cannot be one seq, seqs being per
// lane: it is the last seq handed out of each lane, lane 0 first, "."
// between them, one for each lane up to the highest the ledger had (at
// least two numbers, so that it is never taken for a seq). Each lane is
// read after its own seq through the primary key, whatever the length of
// its history; the events of transactions still in flight are left for a
// later page, as the feed does, so that one committed later never falls
// before a cursor handed out.

// stmtCursor is a hot holder's statement cursor: index i is lane i's seq.
type stmtCursor []int64

func (c stmtCursor) String() string {
	parts := make([]string, len(c))
	for i, s := range c {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(parts, ".")
}

// CheckStatementCursor refuses, before any read, a cursor StatementAfter
// would refuse for its form: INVALID_INSTRUCTION.
func CheckStatementCursor(after string) error {
	_, err := parseStmtCursor(after)
	return err
}

// parseStmtCursor reads a cursor String gave.
func parseStmtCursor(s string) (stmtCursor, error) {
	parts := strings.Split(s, ".")
	c := make(stmtCursor, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || !digitsOnly(p) || len(parts) < 2 || len(parts) > instructions.MaxLanes {
			return nil, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
				"after %q: not a cursor of a hot holder's statement (give the next of a page of it)", clip(s))
		}
		c[i] = n
	}
	return c, nil
}

// mergedQuery reads a page of a hot holder's statement: $1 its lanes, $2
// the seq after which each is read, $3 the limit. Each lane gives its first
// $3 events in seq order, which is their feed order too (the sink holds a
// holder's lock until its batch commits); the page is the first $3 of
// those. A holder's seqs in the ledger have no gap, so a lane's first $3
// after a seq are within the next $3 seqs: the range bounds what each lane
// reads, whatever plan the statistics make (its end kept within bigint: an
// after_seq near 2^63-1 failed the whole read).
const mergedQuery = `SELECT k.holder, e.id, e.seq, e.ts_ms, e.counterparty, e.memo, coalesce(e.transfer, ''), e.ops FROM (
	SELECT i.x, i.holder, i.seq FROM unnest($1::text[], $2::bigint[]) AS f(holder, after)
	CROSS JOIN LATERAL (SELECT coalesce(xid, '0') AS x, holder, seq FROM ledger.instructions
		WHERE holder = f.holder AND seq > f.after AND seq <= least(f.after, 9223372036854775807 - $3) + $3
			AND coalesce(xid, '0') < ` + feedSafe + `
		ORDER BY seq LIMIT $3) AS i
	ORDER BY i.x, i.holder, i.seq LIMIT $3) AS k
	JOIN ledger.events e USING (holder, seq) ORDER BY k.x, k.holder, k.seq`

// mergedStatement reads a page of holder's statement after c, merging
// lane 0 and lanes.
func (l *Ledger) mergedStatement(ctx context.Context, holder string, lanes []string, c stmtCursor, limit int) (Statement, error) {
	names := append([]string{holder}, lanes...)
	width := max(2, len(c))
	for _, h := range lanes {
		_, n := instructions.ParentOf(h)
		width = max(width, n+1)
	}
	at := make(stmtCursor, width)
	copy(at, c)
	after := make([]int64, len(names))
	for i, h := range names {
		_, n := instructions.ParentOf(h)
		after[i] = at[n]
	}
	// One more than asked tells whether there is a next page.
	rows, err := l.pool.Query(ctx, mergedQuery, names, after, limit+1)
	if err != nil {
		return Statement{}, fmt.Errorf("ledger statement: %w", err)
	}
	evs, err := pgx.CollectRows(rows, l.scanLane)
	if err != nil {
		return Statement{}, fmt.Errorf("ledger statement: %w", err)
	}
	st := Statement{Holder: holder, Events: evs}
	if len(evs) > limit {
		st.Events = evs[:limit]
		for _, e := range st.Events {
			at[e.Lane] = e.Seq
		}
		st.Next = at.String()
	}
	return st, nil
}

// mergedInstructionQuery is instructionQuery over a hot holder's lanes ($1):
// the latest in the feed's order.
const mergedInstructionQuery = `SELECT e.holder, e.id, e.seq, e.ts_ms, e.counterparty, e.memo, coalesce(e.transfer, ''), e.ops
	FROM ledger.events e WHERE (holder, seq) = (SELECT holder, seq FROM (
		SELECT holder, seq, xid FROM ledger.instructions WHERE holder = ANY($1) AND id = $2 AND (counterparty <> '' OR transfer IS NULL)
		UNION ALL
		SELECT holder, seq, xid FROM ledger.instructions WHERE transfer = $3 AND holder = ANY($1)
			AND $2 = CASE WHEN counterparty = '' THEN 'x:' || transfer || id ELSE id END) AS s
		ORDER BY coalesce(xid, '0') DESC, holder DESC, seq DESC LIMIT 1)`

// mergedInstruction looks id up on holder and its lanes.
func (l *Ledger) mergedInstruction(ctx context.Context, holder string, lanes []string, id string) (AppliedInstruction, error) {
	rows, err := l.pool.Query(ctx, mergedInstructionQuery, append([]string{holder}, lanes...), id, partTransfer(id))
	if err != nil {
		return AppliedInstruction{}, err
	}
	return pgx.CollectExactlyOneRow(rows, l.scanLane)
}

// scanLane reads a row of mergedQuery or mergedInstructionQuery: the
// holder's lane, then what scanApplied reads.
func (l *Ledger) scanLane(row pgx.CollectableRow) (AppliedInstruction, error) {
	var a AppliedInstruction
	var h string
	err := l.scanEvent(row, &a, &h)
	_, a.Lane = instructions.ParentOf(h)
	return a, err
}
