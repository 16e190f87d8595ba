package ledger_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// debit makes a debit of units minor units of CNY.
func (h *history) debit(id string, units int64) map[string]string {
	h.cny -= units
	return h.next(id, "shop", "", "", fmt.Sprintf(`[{"op":"debit","asset":"CNY","units":"%d","mv":[["CNY","avail","cp","%d"]]}]`, units, units))
}

// sweep makes the commits of a transfer that moves units of CNY from lane
// from to lane 0 to, as a sweep does: two parts, one per holder, their
// counterparty the transfer's clearing account.
func sweep(xfer string, from, to *history, units int64) []map[string]string {
	from.cny -= units
	out := from.next("x:"+xfer+":c", "x:"+xfer, "transfer "+xfer+": commit", xfer,
		fmt.Sprintf(`[{"op":"debit","asset":"CNY","units":"%d","mv":[["CNY","avail","cp","%d"]]}]`, units, units))
	to.cny += units
	in := to.next("x:"+xfer+":c", "x:"+xfer, "transfer "+xfer+": commit", xfer,
		fmt.Sprintf(`[{"op":"credit","asset":"CNY","units":"%d","mv":[["CNY","cp","avail","%d"]]}]`, units, units))
	return []map[string]string{out, in}
}

// laneKey is an event of a hot holder as lane/seq.
func laneKey(lane int, seq int64) string {
	return strconv.Itoa(lane) + "/" + strconv.FormatInt(seq, 10)
}

func TestLanes_TheLedgerKnowsEachLanesParent(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	names := []string{"shop", "shop#1", "shop#63", "shop#64", "shop#0", "shop#01", "shop#", "a#b#7", "#3"}
	var evs []map[string]string
	for _, n := range names {
		evs = append(evs, (&history{holder: n}).open())
	}
	writeAll(t, l, evs)
	parents := func() map[string]string {
		rows, err := l.Pool().Query(ctx, "SELECT holder, coalesce(parent, '') FROM ledger.holders")
		require.NoError(t, err)
		out := map[string]string{}
		for rows.Next() {
			var h, p string
			require.NoError(t, rows.Scan(&h, &p))
			out[h] = p
		}
		require.NoError(t, rows.Err())
		return out
	}
	want := map[string]string{}
	for _, n := range names {
		if p, lane := instructions.ParentOf(n); lane > 0 {
			want[n] = p
		} else {
			want[n] = ""
		}
	}
	assert.Equal(t, map[string]string{"shop": "", "shop#1": "shop", "shop#63": "shop", "shop#64": "", "shop#0": "",
		"shop#01": "", "shop#": "", "a#b#7": "", "#3": ""}, want, "a lane is one # and 1 to #63")
	assert.Equal(t, want, parents(), "the ledger reads a lane's name as the Go side does")

	t.Run("a ledger written before the migration gets its lanes' parents", func(t *testing.T) {
		_, err := l.Pool().Exec(ctx, `DROP INDEX ledger.holders_parent; ALTER TABLE ledger.holders DROP COLUMN parent, DROP COLUMN lanes;
			DELETE FROM ledger.schema_migrations WHERE version = 11`)
		require.NoError(t, err)
		_, err = ledger.Migrate(ctx, l.Pool())
		require.NoError(t, err)
		assert.Equal(t, want, parents())
	})
	t.Run("a holder's lanes are found through the index on parent", func(t *testing.T) {
		_, err := l.Pool().Exec(ctx, "ANALYZE ledger.holders")
		require.NoError(t, err)
		conn, err := l.Pool().Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, "SET enable_seqscan = off") // a table of nine rows is read whole otherwise
		require.NoError(t, err)
		defer conn.Exec(ctx, "RESET enable_seqscan") //nolint:errcheck
		rows, err := conn.Query(ctx, "EXPLAIN "+ledger.LanesQuery, "shop")
		require.NoError(t, err)
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		assert.Contains(t, fmt.Sprint(plan), "holders_parent", "%v", plan)
	})
}

func TestLanes_ASweepBetweenLanesIsBookedOnBothSides(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	hot, lane1 := &history{holder: "merchant"}, &history{holder: "merchant#1"}
	evs := []map[string]string{hot.open(), lane1.open(), lane1.credit("pay-1", 700), lane1.credit("pay-2", 300)}
	evs = append(evs, sweep("sweep-merchant-1-1", lane1, hot, 1000)...)
	evs = append(evs, hot.debit("refund-1", 250))
	writeAll(t, l, evs)

	a, err := l.Audit(ctx, 100)
	require.NoError(t, err)
	assert.Empty(t, a.Unbalanced, "each event's entries sum to zero per asset")
	assert.Empty(t, a.AccountDrift)
	open, err := l.UnsettledTransfers(ctx, 100)
	require.NoError(t, err)
	assert.Empty(t, open, "the sweep's clearing account is back at zero: both parts are booked")
	var lane0, lane1Avail, clearing string
	require.NoError(t, l.Pool().QueryRow(ctx, `SELECT
		(SELECT amount::text FROM ledger.account_amounts WHERE holder = 'merchant' AND kind = 'avail' AND asset = 'CNY'),
		(SELECT amount::text FROM ledger.account_amounts WHERE holder = 'merchant#1' AND kind = 'avail' AND asset = 'CNY'),
		(SELECT net::text FROM ledger.transfer_balances WHERE transfer = 'sweep-merchant-1-1')`).Scan(&lane0, &lane1Avail, &clearing))
	assert.Equal(t, []string{"750", "0", "0"}, []string{lane0, lane1Avail, clearing})
}

func TestLanes_AStatementMergesTheLanesInTheFeedsOrder(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	hot := &history{holder: "fees"}
	lanes := []*history{hot, {holder: "fees#1"}, {holder: "fees#2"}, {holder: "fees#10"}}
	plain := &history{holder: "fees-plain"}
	// Batch by batch, so that the lanes' events interleave in the feed's
	// order, which is not their seqs' (each lane counts its own).
	batches := [][]map[string]string{{hot.open(), plain.open()}, {lanes[1].open(), lanes[3].open()}}
	for i := range 12 {
		var b []map[string]string
		if i == 5 {
			b = append(b, lanes[2].open())
		}
		for j, h := range lanes {
			if (i+j)%3 != 0 && (j != 2 || i >= 5) {
				b = append(b, h.credit(fmt.Sprintf("c-%d-%d", i, j), int64(100+i)))
			}
		}
		b = append(b, plain.credit(fmt.Sprintf("p-%d", i), 1))
		batches = append(batches, b)
	}
	batches = append(batches, sweep("sweep-fees-2-1", lanes[2], hot, 50))
	for _, b := range batches {
		writeAll(t, l, b)
	}

	// The feed gives the order: every event of a lane names its parent and lane.
	var want []string
	for _, e := range readFeed(t, l, ledger.FeedQuery{Limit: 1}) {
		p, lane := instructions.ParentOf(e.Holder)
		if e.Holder == "fees" || e.Parent == "fees" {
			assert.Equal(t, lane, e.Lane, "%s", e.Holder)
			if lane > 0 {
				assert.Equal(t, p, e.Parent)
			}
			want = append(want, laneKey(e.Lane, e.Seq))
		} else {
			assert.Empty(t, e.Parent, "a plain holder's event has no parent")
			assert.Zero(t, e.Lane)
		}
	}
	require.Len(t, want, int(hot.seq+lanes[1].seq+lanes[2].seq+lanes[3].seq))

	t.Run("pages of every size cover the lanes once, in the feed's order", func(t *testing.T) {
		for _, limit := range []int{1, 2, 7, 100} {
			var got []string
			st, err := l.Statement(ctx, "fees", 0, limit)
			for {
				require.NoError(t, err)
				assert.Zero(t, st.NextAfterSeq, "a hot holder's statement pages by a cursor")
				assert.Equal(t, "fees", st.Holder)
				for _, e := range st.Events {
					got = append(got, laneKey(e.Lane, e.Seq))
				}
				if st.Next == "" {
					break
				}
				st, err = l.StatementAfter(ctx, "fees", st.Next, limit)
			}
			assert.Equal(t, want, got, "limit %d", limit)
		}
	})
	t.Run("an event names its lane; lane 0's and a plain holder's do not", func(t *testing.T) {
		st, err := l.Statement(ctx, "fees", 0, 100)
		require.NoError(t, err)
		byKey := map[string]ledger.AppliedInstruction{}
		for _, e := range st.Events {
			byKey[laneKey(e.Lane, e.Seq)] = e
		}
		assert.Equal(t, "c-0-1", byKey[laneKey(1, 2)].ID)
		assert.Equal(t, "open-fees#10", byKey[laneKey(10, 1)].ID)
		assert.Equal(t, "x:sweep-fees-2-1:c", byKey[laneKey(0, hot.seq)].ID)
		ps, err := l.Statement(ctx, plain.holder, 0, 5)
		require.NoError(t, err)
		for _, e := range ps.Events {
			assert.Zero(t, e.Lane)
		}
		assert.Equal(t, int64(5), ps.NextAfterSeq, "a plain holder's statement pages by seq, as before")
		assert.Empty(t, ps.Next)
	})
	t.Run("after_seq on a hot holder is lane 0's, every other lane from its first", func(t *testing.T) {
		st, err := l.Statement(ctx, "fees", hot.seq-1, 1000)
		require.NoError(t, err)
		var got []string
		for _, e := range st.Events {
			got = append(got, laneKey(e.Lane, e.Seq))
		}
		var wantAfter []string
		for _, k := range want {
			if k[0] != '0' || k == laneKey(0, hot.seq) {
				wantAfter = append(wantAfter, k)
			}
		}
		assert.Equal(t, wantAfter, got)
	})
	t.Run("a cursor the statement did not hand out is refused", func(t *testing.T) {
		for _, c := range []string{"", "5", "1.x", "1..2", "-1.2", "1.+2", "1.2.", strings.Repeat("0.", 64) + "0"} {
			_, err := l.StatementAfter(ctx, "fees", c, 10)
			requireCode(t, err, instructions.CodeInvalidInstruction)
		}
		_, err := l.StatementAfter(ctx, "nobody-here", "0.0", 10)
		requireCode(t, err, instructions.CodeHolderNotFound)
	})
	t.Run("the feed's cursor can stand on a lane's event", func(t *testing.T) {
		all := readFeed(t, l, ledger.FeedQuery{Limit: 1000})
		for i, e := range all {
			if e.Lane == 0 || i == len(all)-1 {
				continue
			}
			page, err := l.Feed(ctx, ledger.FeedQuery{After: e.Cursor, Limit: 1})
			require.NoError(t, err, "after %s", e.Cursor)
			require.Len(t, page.Events, 1)
			assert.Equal(t, all[i+1].Cursor, page.Events[0].Cursor)
			break
		}
		for _, c := range []string{"1.1.fees#0", "1.1.fees#64", "1.1.fees#x", "1.1.{a}#1"} {
			_, err := l.Feed(ctx, ledger.FeedQuery{After: c})
			requireCode(t, err, instructions.CodeInvalidInstruction)
		}
	})
}

func TestLanes_ALookupUnderAHotHolderFindsAnyLane(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	hot, l1, l2 := &history{holder: "exch"}, &history{holder: "exch#1"}, &history{holder: "exch#2"}
	other := &history{holder: "exch-other"}
	writeAll(t, l, []map[string]string{hot.open(), l1.open(), l2.open(), other.open(), l1.credit("fee-1", 5), l2.credit("fee-2", 7),
		other.credit("fee-9", 1)})

	a, err := l.Instruction(ctx, "exch", "fee-2")
	require.NoError(t, err)
	assert.Equal(t, 2, a.Lane)
	assert.Equal(t, int64(2), a.Seq)
	assert.Equal(t, "0.07", a.Ops[0].Amount)
	a, err = l.Instruction(ctx, "exch", "open-exch")
	require.NoError(t, err)
	assert.Zero(t, a.Lane, "lane 0's")
	_, err = l.Instruction(ctx, "exch", "fee-9")
	requireCode(t, err, instructions.CodeInstructionNotFound)

	t.Run("an id used again on another lane: the latest", func(t *testing.T) {
		writeAll(t, l, []map[string]string{l2.credit("fee-1", 9)})
		a, err := l.Instruction(ctx, "exch", "fee-1")
		require.NoError(t, err)
		assert.Equal(t, 2, a.Lane)
		assert.Equal(t, "0.09", a.Ops[0].Amount)
	})
	t.Run("a transfer part on a lane, by its step's id", func(t *testing.T) {
		writeAll(t, l, sweep("sweep-exch-1-1", l1, hot, 5))
		a, err := l.Instruction(ctx, "exch", "x:sweep-exch-1-1:c")
		require.NoError(t, err)
		assert.Equal(t, "sweep-exch-1-1", a.Transfer)
		// Both parts, written in one batch, share the id: the later in the
		// feed's order (xid, holder, seq) is lane 1's.
		assert.Equal(t, 1, a.Lane)
	})
}

// A hot holder's statement holds back what a batch still in flight may
// precede, as the feed does: lane 2's batch takes its xid, then waits; lane
// 1's, later, commits first. Lane 1's new event must not show before lane
// 2's, which the feed gives first.
func TestLanes_AStatementNeverShowsAnEventBeforeOneInFlight(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	hot, lane1, lane2 := &history{holder: "till"}, &history{holder: "till#1"}, &history{holder: "till#2"}
	writeAll(t, l, []map[string]string{hot.open(), lane1.open(), lane1.credit("pay-1", 500)})
	statement := func() []string {
		st, err := l.Statement(ctx, "till", 0, 100)
		require.NoError(t, err)
		var out []string
		for _, e := range st.Events {
			out = append(out, laneKey(e.Lane, e.Seq))
		}
		return out
	}
	require.Equal(t, []string{"0/1", "1/1", "1/2"}, statement())

	release := applyBehindTheBank(t, l, lane2.open(), lane2.credit("pay-2", 5))
	// Lane 1's batch pays the shop, not the bank: it commits now.
	_, err := l.Apply(ctx, stored.Entries(lane1.debit("refund-1", 100)))
	require.NoError(t, err)
	assert.Equal(t, []string{"0/1", "1/1", "1/2"}, statement(), "lane 2's batch in flight could come before lane 1's new event")

	require.NoError(t, release())
	assert.Equal(t, []string{"0/1", "1/1", "1/2", "2/1", "2/2", "1/3"}, statement())
	var feed []string
	for _, e := range readFeed(t, l, ledger.FeedQuery{}) {
		feed = append(feed, laneKey(e.Lane, e.Seq))
	}
	assert.Equal(t, feed, statement(), "the feed's order")
}

// A page of a hot holder's statement reads each lane after its cursor's seq
// through the primary key: its cost does not grow with the lanes' history.
func TestLanes_AStatementPageReadsEachLaneByItsPrimaryKey(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	hs := []*history{{holder: "big"}, {holder: "big#1"}, {holder: "big#2"}, {holder: "big-plain"}}
	var evs []map[string]string
	for _, h := range hs {
		evs = append(evs, h.open())
	}
	for i := range 1500 {
		for _, h := range hs {
			evs = append(evs, h.credit("c-"+strconv.Itoa(i), 1))
		}
	}
	for lo := 0; lo < len(evs); lo += 200 {
		writeAll(t, l, evs[lo:min(lo+200, len(evs))])
	}
	_, err := l.Pool().Exec(ctx, "ANALYZE ledger.instructions")
	require.NoError(t, err)
	rows, err := l.Pool().Query(ctx, "EXPLAIN "+ledger.MergedQuery, []string{"big", "big#1", "big#2"}, []int64{1200, 1100, 1000}, 101)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	t.Logf("plan:\n%s", plan)
	assert.Regexp(t, `Index Cond: \(\(holder = f\.holder\) AND \(seq > f\.after\) AND \(seq <= \(LEAST\(f\.after, `, plan,
		"each lane reads at most a page's seqs of the primary key")
	assert.NotContains(t, plan, "Seq Scan")

	st, err := l.StatementAfter(ctx, "big", "1200.1100.1000", 3)
	require.NoError(t, err)
	var got []string
	for _, e := range st.Events {
		got = append(got, laneKey(e.Lane, e.Seq))
	}
	// Seq 1001 of lane 2 is in an earlier batch than 1101 of lane 1 and 1201 of lane 0.
	assert.Equal(t, []string{"2/1001", "2/1002", "2/1003"}, got)
	assert.Equal(t, "1200.1100.1003", st.Next)
}

// TestLanes_LanesWithoutTheirHolderAreNoOnes: an open with lanes that lane
// 0 refused leaves its lanes opened, and their events reach the ledger; the
// holder does not exist, so it has neither a statement nor instructions to
// look up until its lane 0 has an event.
func TestLanes_LanesWithoutTheirHolderAreNoOnes(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	lane1 := &history{holder: "ghost#1"}
	writeAll(t, l, []map[string]string{lane1.next("x:lanes-open-2", "external", "", "", `[{"op":"open","units":"2"}]`)})
	_, err := l.Statement(ctx, "ghost", 0, 10)
	require.ErrorIs(t, err, instructions.CodeHolderNotFound)
	_, err = l.Instruction(ctx, "ghost", "x:lanes-open-2")
	require.ErrorIs(t, err, instructions.CodeInstructionNotFound)

	writeAll(t, l, []map[string]string{(&history{holder: "ghost"}).open()})
	st, err := l.Statement(ctx, "ghost", 0, 10)
	require.NoError(t, err)
	assert.Len(t, st.Events, 2, "lane 0's open and lane 1's")
	a, err := l.Instruction(ctx, "ghost", "x:lanes-open-2")
	require.NoError(t, err)
	assert.Equal(t, 1, a.Lane)
}
