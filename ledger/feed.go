package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/instructions"
)

// The feed: every holder's applied instructions in one order, which a reader
// follows by a cursor (docs/feed.md).
//
// Its order is (xid, holder, seq): xid is the id of the transaction that
// wrote the event (migration 10), the history written before the feed
// existed (xid NULL) first, by (holder, seq). Batches take their xids in one
// order and commit in another, so the feed hands out only the events whose
// xid is below the xmin of the snapshot it reads them in: every transaction
// below it has ended, and any event committed later has a greater xid, so
// it comes after every cursor handed out before. A holder's events are in
// seq order in the feed too: the sink takes a holder's lock before its
// transaction's first write, which gives the transaction its xid, and keeps
// it until it commits, so the batch with a holder's next event takes its
// xid after the batch before it committed.

// FeedQuery asks for a page of the feed.
type FeedQuery struct {
	// After is the cursor to read after: an event's Cursor or a page's Next.
	// Default "": from the first event.
	After string
	// Limit is the most events to give, 1 to MaxStatementLimit. Default 0:
	// DefaultStatementLimit.
	Limit int
	// Holder, when not "", keeps only that holder's events. Default "".
	Holder string
	// Transfer, when not "", keeps only the parts of that transfer. Default "".
	Transfer string
}

// FeedPage is a page of the feed, oldest first.
type FeedPage struct {
	Events []FeedEvent `json:"events"`
	// Next is the cursor to ask after for the next page: the last event's,
	// or the one asked after when the page is empty.
	Next string `json:"next"`
}

// FeedEvent is an applied instruction in the feed: the statement's shape,
// with its holder and its cursor. An event of lane i (1 to 63) of a hot
// holder X has the holder X#i, the parent X and the lane i; one of lane 0
// is X's own, as a plain holder's: a reader that sums per holder sums
// under parent where there is one.
type FeedEvent struct {
	Cursor string `json:"cursor"`
	Holder string `json:"holder"`
	Parent string `json:"parent,omitempty"` // the hot holder whose lane Holder is
	AppliedInstruction
}

// feedCursor is a position in the feed: after the event (holder, seq)
// written by transaction xid (0: the history before the feed). The zero
// value is before the first event.
type feedCursor struct {
	xid    uint64
	holder string
	seq    int64
}

// String gives the cursor as the feed hands it out: "<xid>.<seq>.<holder>",
// "" for the start. Readers keep it as an opaque string.
func (c feedCursor) String() string {
	if c == (feedCursor{}) {
		return ""
	}
	return strconv.FormatUint(c.xid, 10) + "." + strconv.FormatInt(c.seq, 10) + "." + c.holder
}

// parseFeedCursor reads a cursor String gave.
func parseFeedCursor(s string) (feedCursor, error) {
	if s == "" {
		return feedCursor{}, nil
	}
	x, rest, ok1 := strings.Cut(s, ".")
	sq, holder, ok2 := strings.Cut(rest, ".")
	xid, err1 := strconv.ParseUint(x, 10, 64)
	seq, err2 := strconv.ParseInt(sq, 10, 64)
	// The numbers as the feed writes them: no sign, no leading zero (a
	// cursor spelt another way was never handed out).
	if !ok1 || !ok2 || err1 != nil || err2 != nil || seq < 1 || !validHolder(holder) ||
		strconv.FormatUint(xid, 10) != x || strconv.FormatInt(seq, 10) != sq {
		return feedCursor{}, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"after %q: not a cursor of the feed (give \"\" or an event's cursor, as the feed handed it out)", clip(s))
	}
	return feedCursor{xid: xid, holder: holder, seq: seq}, nil
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// feedSafe is the bound below which the feed hands events out: the xmin of
// the statement's snapshot.
const feedSafe = `(SELECT pg_snapshot_xmin(pg_current_snapshot()))`

// feedColumns are what a page reads of each event, keys k joined to ledger.events e.
const feedColumns = `k.x::text, e.holder, e.id, e.seq, e.ts_ms, e.counterparty, e.memo, coalesce(e.transfer, ''), e.ops`

// feedQuery reads a page of the whole feed ($1 xid, $2 holder, $3 seq of
// the cursor; $4 the limit): the history's events after the cursor through
// its index (only while the cursor is in the history), then those of ended
// transactions through the feed's index, which gives them by xid; the sort
// puts each batch's events in (holder, seq) order.
const feedQuery = `SELECT ` + feedColumns + ` FROM (
	(SELECT '0'::xid8 AS x, holder, seq FROM ledger.instructions
		WHERE $1::xid8 = '0' AND xid IS NULL AND (holder, seq) > ($2, $3) ORDER BY holder, seq LIMIT $4)
	UNION ALL
	(SELECT xid, holder, seq FROM ledger.instructions
		WHERE xid >= $1::xid8 AND xid < ` + feedSafe + ` AND (xid > $1::xid8 OR (holder, seq) > ($2, $3))
		ORDER BY xid, holder, seq LIMIT $4)) AS k
	JOIN ledger.events e USING (holder, seq) ORDER BY k.x, k.holder, k.seq LIMIT $4`

// feedFilteredQuery reads a page of the events the first %s keeps
// (parameters from $5), in the order the second gives.
const feedFilteredQuery = `SELECT ` + feedColumns + ` FROM (
	SELECT coalesce(xid, '0') AS x, holder, seq FROM ledger.instructions
	WHERE %s AND (coalesce(xid, '0'), holder, seq) > ($1::xid8, $2, $3) AND coalesce(xid, '0') < ` + feedSafe + `
	ORDER BY %s LIMIT $4) AS k
	JOIN ledger.events e USING (holder, seq) ORDER BY k.x, k.holder, k.seq`

// A holder's events ($5), those of one transfer among them ($7, "" for
// all), are in seq order in the feed: its primary key gives them so, from
// the cursor's seq when the cursor is one of the holder's ($6, else 0), and
// the first one not handed out yet ends the page (every later one has a
// greater xid). A transfer ($5) has a few parts: they are sorted.
var (
	feedByHolder   = fmt.Sprintf(feedFilteredQuery, `holder = $5 AND seq > $6 AND ($7 = '' OR transfer = $7)`, "holder, seq")
	feedByTransfer = fmt.Sprintf(feedFilteredQuery, `transfer = $5`, "1, 2, 3")
)

// Check refuses a query Feed would refuse for what it says, before any
// read: INVALID_INSTRUCTION (a cursor the feed did not hand out, a limit
// outside 0..MaxStatementLimit), INVALID_ID (a bad holder or transfer).
func (q FeedQuery) Check() error {
	_, err := q.check()
	return err
}

// check is Check, giving the cursor read.
func (q FeedQuery) check() (feedCursor, error) {
	after, err := parseFeedCursor(q.After)
	if err != nil {
		return feedCursor{}, err
	}
	if q.Limit < 0 || q.Limit > MaxStatementLimit {
		return feedCursor{}, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"limit %d: want 1 to %d", q.Limit, MaxStatementLimit)
	}
	// A lane's events have the holder X#i: the filter takes that name too.
	if q.Holder != "" && !validHolder(q.Holder) {
		return feedCursor{}, checkID("holder", q.Holder)
	}
	if q.Transfer != "" {
		if err := checkID("transfer", q.Transfer); err != nil {
			return feedCursor{}, err
		}
	}
	return after, nil
}

// handedOut refuses a cursor that names no event of the ledger, or one
// written by another transaction than it says: the feed never handed it
// out (forged, corrupted, or of another ledger), and a page after it would
// skip every event below it for good.
func (l *Ledger) handedOut(ctx context.Context, c feedCursor, raw string) error {
	if c == (feedCursor{}) {
		return nil
	}
	var x string
	err := l.pool.QueryRow(ctx, `SELECT coalesce(xid, '0')::text FROM ledger.instructions WHERE holder = $1 AND seq = $2`,
		c.holder, c.seq).Scan(&x)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && x != strconv.FormatUint(c.xid, 10):
		return instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"after %q: no event of the ledger has this cursor (give \"\" or an event's cursor, as the feed handed it out)", clip(raw))
	case err != nil:
		return fmt.Errorf("ledger feed: %w", err)
	}
	return nil
}

// Feed reads a page of the feed: applied instructions of every holder
// after q.After, oldest first (see FeedPage). A page may be empty while
// events are being committed: ask again after Next.
//
// Errors: those of Check; a plain error when PostgreSQL fails.
func (l *Ledger) Feed(ctx context.Context, q FeedQuery) (FeedPage, error) {
	after, err := q.check()
	if err != nil {
		return FeedPage{}, err
	}
	if err := l.handedOut(ctx, after, q.After); err != nil {
		return FeedPage{}, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultStatementLimit
	}
	x := strconv.FormatUint(after.xid, 10)
	var rows pgx.Rows
	switch {
	case q.Holder == "" && q.Transfer == "":
		rows, err = l.pool.Query(ctx, feedQuery, x, after.holder, after.seq, q.Limit)
	case q.Holder == "":
		rows, err = l.pool.Query(ctx, feedByTransfer, x, after.holder, after.seq, q.Limit, q.Transfer)
	default:
		from := int64(0)
		if q.Holder == after.holder {
			from = after.seq
		}
		rows, err = l.pool.Query(ctx, feedByHolder, x, after.holder, after.seq, q.Limit, q.Holder, from, q.Transfer)
	}
	if err != nil {
		return FeedPage{}, fmt.Errorf("ledger feed: %w", err)
	}
	evs, err := pgx.CollectRows(rows, l.scanFeed)
	if err != nil {
		return FeedPage{}, fmt.Errorf("ledger feed: %w", err)
	}
	page := FeedPage{Events: evs, Next: q.After}
	if len(evs) > 0 {
		page.Next = evs[len(evs)-1].Cursor
	}
	return page, nil
}

// Waiting gives the server time (ts_ms) of the first event after the
// cursor that PostgreSQL has committed, handed out by the feed yet or
// not (a transaction still open below it holds the feed back); 0 when none.
// Its age is how long a reader at that cursor has waited.
func (l *Ledger) Waiting(ctx context.Context, after string) (int64, error) {
	c, err := parseFeedCursor(after)
	if err != nil {
		return 0, err
	}
	var ts int64
	err = l.pool.QueryRow(ctx, `SELECT e.ts_ms FROM ledger.instructions k JOIN ledger.events e USING (holder, seq)
		WHERE k.xid >= $1::xid8 AND (k.xid > $1::xid8 OR (k.holder, k.seq) > ($2, $3))
		ORDER BY k.xid, k.holder, k.seq LIMIT 1`, strconv.FormatUint(c.xid, 10), c.holder, c.seq).Scan(&ts)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("ledger feed: %w", err)
	}
	return ts, nil
}

// scanFeed reads a row of feedQuery or feedFilteredQuery.
func (l *Ledger) scanFeed(row pgx.CollectableRow) (FeedEvent, error) {
	var e FeedEvent
	var x string
	a := &e.AppliedInstruction
	if err := l.scanEvent(row, a, &x, &e.Holder); err != nil {
		return e, err
	}
	xid, err := strconv.ParseUint(x, 10, 64)
	if err != nil {
		return e, fmt.Errorf("event %s/%d: xid %q: %w", e.Holder, a.Seq, x, err)
	}
	e.Cursor = feedCursor{xid: xid, holder: e.Holder, seq: a.Seq}.String()
	if p, lane := instructions.ParentOf(e.Holder); lane > 0 {
		e.Parent, a.Lane = p, lane
	}
	return e, nil
}
