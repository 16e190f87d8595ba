package ledger_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// readFeed reads the feed from after to its end, in pages of limit.
func readFeed(t *testing.T, l *ledger.Ledger, q ledger.FeedQuery) []ledger.FeedEvent {
	t.Helper()
	var out []ledger.FeedEvent
	for {
		page, err := l.Feed(context.Background(), q)
		require.NoError(t, err)
		require.NotNil(t, page.Events, "an empty page is [], not null")
		out = append(out, page.Events...)
		if len(page.Events) == 0 {
			require.Equal(t, q.After, page.Next, "an empty page's next is the cursor asked after")
			return out
		}
		q.After = page.Next
	}
}

func keys(evs []ledger.FeedEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Holder + "/" + strconv.FormatInt(e.Seq, 10)
	}
	return out
}

// TestFeed_AnEventCommittedLaterIsNeverBehindACursor holds a real batch in
// flight after it wrote its events (another transaction holds the
// counterparty's account it must update), while a second batch commits:
// the feed must not hand out the second batch's events, which come after
// the first's, until the first has committed. Then it gives both, the first
// batch's first, and a reader that kept its cursor misses nothing.
func TestFeed_AnEventCommittedLaterIsNeverBehindACursor(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	early, late, other := &history{holder: "feed-early"}, &history{holder: "feed-late"}, &history{holder: "feed-other"}
	writeAll(t, l, []map[string]string{early.open()})
	page, err := l.Feed(ctx, ledger.FeedQuery{})
	require.NoError(t, err)
	require.Equal(t, []string{"feed-early/1"}, keys(page.Events))
	cursor := page.Next

	release := applyBehindTheBank(t, l, late.open(), late.credit("late-1", 5))
	// The other batch's counterparty is not the bank's: it commits now.
	_, err = l.Apply(ctx, stored.Entries(other.next("open-other", "shop", "", "", `[{"op":"open"}]`)))
	require.NoError(t, err)
	page, err = l.Feed(ctx, ledger.FeedQuery{After: cursor})
	require.NoError(t, err)
	assert.Empty(t, page.Events, "an event of a batch in flight could come before it")
	assert.Equal(t, cursor, page.Next)

	require.NoError(t, release())
	got := readFeed(t, l, ledger.FeedQuery{After: cursor})
	assert.Equal(t, []string{"feed-late/1", "feed-late/2", "feed-other/1"}, keys(got))
}

// applyBehindTheBank applies a batch whose events pay the bank while the
// bank's accounts are locked: it returns once the batch waits there, its
// events written (its xid taken); release lets it commit and gives its
// error.
func applyBehindTheBank(t *testing.T, l *ledger.Ledger, evs ...map[string]string) (release func() error) {
	t.Helper()
	ctx := context.Background()
	lock, err := l.Pool().Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Rollback(ctx) })
	_, err = lock.Exec(ctx, "SELECT 1 FROM ledger.accounts WHERE holder = 'bank' FOR UPDATE")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := l.Apply(ctx, stored.Entries(evs...))
		done <- err
	}()
	waitersOnLocks(t, l, 1)
	return func() error {
		if err := lock.Rollback(ctx); err != nil {
			return err
		}
		return <-done
	}
}

// waitersOnLocks waits until n backends of the ledger's database wait on a lock.
func waitersOnLocks(t *testing.T, l *ledger.Ledger, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var waiting int
		require.NoError(t, l.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
		if waiting >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d of %d batches wait on a lock", waiting, n)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFeed_AHoldersNextBatchTakesItsXidAfterTheOneBefore: a holder's events
// are in seq order in the feed only because a batch takes its holders'
// locks before its first write, which gives it its xid. Batch B (another
// holder's first event and the holder's seq 3) starts first and waits on
// the other holder's lock, which it takes before the holder's; batch A (the
// holder's seq 2) commits meanwhile; then B applies seq 3. B's events must
// come after A's: a sink that wrote anything before taking its holders'
// locks would have given B the smaller xid, and seq 3 would come before 2.
func TestFeed_AHoldersNextBatchTakesItsXidAfterTheOneBefore(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "feed-order"}
	// A holder whose lock B takes before the holder's (lockHeads locks by hash).
	var other *history
	for i := 0; other == nil; i++ {
		name := "feed-first-" + strconv.Itoa(i)
		var before bool
		require.NoError(t, l.Pool().QueryRow(ctx, "SELECT hashtext($1) < hashtext($2)", name, h.holder).Scan(&before))
		if before {
			other = &history{holder: name}
		}
	}
	one, two, three := h.open(), h.credit("c-2", 1), h.credit("c-3", 1)
	writeAll(t, l, []map[string]string{one})

	lock, err := l.Pool().Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = lock.Rollback(ctx) }()
	_, err = lock.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", ledger.HolderLockClass, other.holder)
	require.NoError(t, err)
	bDone := make(chan error, 1)
	go func() { _, err := l.Apply(ctx, stored.Entries(other.open(), three)); bDone <- err }()
	waitersOnLocks(t, l, 1)
	writeAll(t, l, []map[string]string{two})
	require.NoError(t, lock.Rollback(ctx))
	require.NoError(t, <-bDone)

	var mine []string
	for _, k := range keys(readFeed(t, l, ledger.FeedQuery{})) {
		if strings.HasPrefix(k, h.holder+"/") {
			mine = append(mine, k)
		}
	}
	assert.Equal(t, []string{"feed-order/1", "feed-order/2", "feed-order/3"}, mine)
}

// TestFeed_ConcurrentSinksAndAFollower runs four sinks at once, as four
// relays would, on the events of payments between the same holders, cut in
// batches dealt out at random (a holder's later events may come first and
// park), while a reader follows the feed with pages of random sizes. The
// reader meets every event once, each holder's in seq order, in the order
// the feed gives when read again at the end: no event came in before a
// cursor it had handed out.
func TestFeed_ConcurrentSinksAndAFollower(t *testing.T) {
	needServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 3))
	names, byHolder := payments(t, seed, 8, 200)
	l := openLedger(t)

	const sinks = 4
	queues := make([][][]map[string]string, sinks)
	total := 0
	for _, h := range names {
		evs := byHolder[h]
		total += len(evs)
		for lo := 0; lo < len(evs); {
			hi := min(lo+1+rnd.IntN(12), len(evs))
			k := rnd.IntN(sinks)
			queues[k] = append(queues[k], evs[lo:hi])
			lo = hi
		}
	}
	for _, q := range queues {
		rnd.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
	}
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Go(func() {
			for _, b := range q {
				_, err := l.Apply(ctx, stored.Entries(b...))
				assert.NoError(t, err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var followed []ledger.FeedEvent
	followRnd := rand.New(rand.NewPCG(seed, 4))
	after := ""
follow:
	for len(followed) < total && ctx.Err() == nil {
		// Whether every sink had committed before this page was read: an
		// empty page read while one was still committing is no skip.
		finished := false
		select {
		case <-done:
			finished = true
		default:
		}
		page, err := l.Feed(ctx, ledger.FeedQuery{After: after, Limit: 1 + followRnd.IntN(20)})
		require.NoError(t, err)
		followed = append(followed, page.Events...)
		after = page.Next
		if finished && len(page.Events) == 0 && len(readFeed(t, l, ledger.FeedQuery{Limit: ledger.MaxStatementLimit})) == total {
			break follow // the feed has given everything: the reader missed what it lacks
		}
	}
	<-done
	require.NoError(t, ctx.Err())

	seen := map[string]bool{}
	last := map[string]int64{}
	for _, e := range followed {
		k := e.Holder + "/" + strconv.FormatInt(e.Seq, 10)
		require.False(t, seen[k], "event %s met twice", k)
		seen[k] = true
		require.Equal(t, last[e.Holder]+1, e.Seq, "holder %s: events out of seq order", e.Holder)
		last[e.Holder] = e.Seq
	}
	for _, h := range names {
		assert.Equal(t, int64(len(byHolder[h])), last[h], "holder %s: every event met", h)
	}
	all := readFeed(t, l, ledger.FeedQuery{Limit: ledger.MaxStatementLimit})
	require.Equal(t, keys(all), keys(followed), "the reader met the events in the feed's order")
	page, err := l.Feed(ctx, ledger.FeedQuery{After: after})
	require.NoError(t, err)
	assert.Empty(t, page.Events, "nothing after the end")

	t.Run("a holder's events, and a transfer's parts, in the feed's order", func(t *testing.T) {
		byH, byT := map[string][]string{}, map[string][]string{}
		for _, e := range all {
			byH[e.Holder] = append(byH[e.Holder], e.Cursor)
			if e.Transfer != "" {
				byT[e.Transfer] = append(byT[e.Transfer], e.Cursor)
			}
		}
		cursors := func(evs []ledger.FeedEvent) []string {
			var out []string
			for _, e := range evs {
				out = append(out, e.Cursor)
			}
			return out
		}
		for _, h := range names[:3] {
			assert.Equal(t, byH[h], cursors(readFeed(t, l, ledger.FeedQuery{Holder: h, Limit: 7})), "holder %s", h)
			// From a cursor of another holder's: what follows it.
			mid := all[len(all)/2]
			var want []string
			for _, e := range all[len(all)/2+1:] {
				if e.Holder == h {
					want = append(want, e.Cursor)
				}
			}
			assert.Equal(t, want, cursors(readFeed(t, l, ledger.FeedQuery{Holder: h, After: mid.Cursor, Limit: 5})), "holder %s after %s", h, mid.Cursor)
		}
		n := 0
		for x, want := range byT {
			assert.Equal(t, want, cursors(readFeed(t, l, ledger.FeedQuery{Transfer: x, Limit: 3})), "transfer %s", x)
			if n++; n == 5 {
				break
			}
		}
	})
	t.Run("an event is the statement's", func(t *testing.T) {
		h := names[0]
		st, err := l.Statement(ctx, h, 0, ledger.MaxStatementLimit)
		require.NoError(t, err)
		var mine []ledger.AppliedInstruction
		for _, e := range all {
			if e.Holder == h {
				mine = append(mine, e.AppliedInstruction)
			}
		}
		assert.Equal(t, st.Events, mine)
	})
}

// TestFeed_HistoryBeforeTheFeedComesFirst: rows written before migration 10
// have no xid; the feed gives them first, by holder and seq, then what
// batches wrote since.
func TestFeed_HistoryBeforeTheFeedComesFirst(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	b, a := &history{holder: "feed-b"}, &history{holder: "feed-a"}
	writeAll(t, l, []map[string]string{b.open(), b.credit("b-2", 1)})
	writeAll(t, l, []map[string]string{a.open()})
	_, err := l.Pool().Exec(ctx, "UPDATE ledger.instructions SET xid = NULL")
	require.NoError(t, err)
	writeAll(t, l, []map[string]string{b.credit("b-3", 1), a.credit("a-2", 1)})

	got := readFeed(t, l, ledger.FeedQuery{Limit: 2})
	assert.Equal(t, []string{"feed-a/1", "feed-b/1", "feed-b/2", "feed-a/2", "feed-b/3"}, keys(got))
	assert.Equal(t, got[3:], readFeed(t, l, ledger.FeedQuery{After: got[2].Cursor}))
	assert.Equal(t, []string{"feed-b/2", "feed-b/3"}, keys(readFeed(t, l, ledger.FeedQuery{Holder: "feed-b", After: got[1].Cursor})))
}

func TestFeed_BadQueries(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	for _, after := range []string{"x", "1.2", "1.0.h", "-1.2.h", "1.2.{h}", "+1.2.h", "1.2.", "01.2.h", "1.02.h"} {
		_, err := l.Feed(ctx, ledger.FeedQuery{After: after})
		requireCode(t, err, instructions.CodeInvalidInstruction)
		assert.ErrorContains(t, err, "not a cursor of the feed")
	}
	_, err := l.Feed(ctx, ledger.FeedQuery{Limit: ledger.MaxStatementLimit + 1})
	requireCode(t, err, instructions.CodeInvalidInstruction)
	_, err = l.Feed(ctx, ledger.FeedQuery{Holder: "{bad}"})
	requireCode(t, err, instructions.CodeInvalidID)
	_, err = l.Feed(ctx, ledger.FeedQuery{Transfer: "a b"})
	requireCode(t, err, instructions.CodeInvalidID)
}

// TestFeed_Plans: a page reads the feed's index from the cursor, a holder's
// page its primary key; neither reads the whole table.
func TestFeed_Plans(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	var evs []map[string]string
	for i := range 20 {
		h := &history{holder: "plan-" + strconv.Itoa(i)}
		evs = append(evs, h.open())
		for j := range 100 {
			evs = append(evs, h.credit("c-"+strconv.Itoa(j), 1))
		}
	}
	for lo := 0; lo < len(evs); lo += 50 {
		writeAll(t, l, evs[lo:min(lo+50, len(evs))])
	}
	_, err := l.Pool().Exec(ctx, "ANALYZE ledger.instructions")
	require.NoError(t, err)
	all := readFeed(t, l, ledger.FeedQuery{Limit: ledger.MaxStatementLimit})
	require.Len(t, all, len(evs))
	explain := func(q string, args ...any) string {
		rows, err := l.Pool().Query(ctx, "EXPLAIN "+q, args...)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		t.Logf("plan:\n%s", strings.Join(lines, "\n"))
		return strings.Join(lines, "\n")
	}
	mid := strings.SplitN(all[len(all)/2].Cursor, ".", 3)
	seq, err := strconv.ParseInt(mid[1], 10, 64)
	require.NoError(t, err)
	plan := explain(ledger.FeedQueryText, mid[0], mid[2], seq, 100)
	assert.Contains(t, plan, "instructions_feed on instructions")
	assert.NotContains(t, plan, "Seq Scan")
	plan = explain(ledger.FeedByHolder, mid[0], mid[2], seq, 100, "plan-3", int64(0), "")
	assert.Contains(t, plan, "instructions_pkey on instructions")
	assert.NotContains(t, plan, "Seq Scan")
}

// BenchmarkFeed_Read reads the whole feed of a ledger of 50,000 events
// (100 holders, batches of 1,000 through the sink) in pages of 1,000, as
// a consumer catching up would:
//
//	go test -run '^$' -bench Feed_Read -benchtime 3x ./ledger/
func BenchmarkFeed_Read(b *testing.B) {
	needServers(b)
	ctx := context.Background()
	l := openLedger(b)
	hs := make([]*history, 100)
	var evs []map[string]string
	for i := range hs {
		hs[i] = &history{holder: "bench-" + strconv.Itoa(i)}
		evs = append(evs, hs[i].open())
	}
	for j := range 499 {
		for _, h := range hs {
			evs = append(evs, h.credit("c-"+strconv.Itoa(j), 1))
		}
	}
	for lo := 0; lo < len(evs); lo += 1000 {
		_, err := l.Apply(ctx, stored.Entries(evs[lo:min(lo+1000, len(evs))]...))
		require.NoError(b, err)
	}
	b.ResetTimer()
	for range b.N {
		n, after := 0, ""
		for {
			page, err := l.Feed(ctx, ledger.FeedQuery{After: after, Limit: ledger.MaxStatementLimit})
			require.NoError(b, err)
			if len(page.Events) == 0 {
				break
			}
			n, after = n+len(page.Events), page.Next
		}
		require.Equal(b, len(evs), n)
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
}
