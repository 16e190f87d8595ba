package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// adv2SameSlot gives a holder name, other than h, whose keys live in h's slot.
func adv2SameSlot(t *testing.T, h string) string {
	t.Helper()
	slot := cluster.HolderSlot(h)
	for i := 0; i < 10_000_000; i++ {
		n := fmt.Sprintf("%s-n%d", h, i)
		if cluster.HolderSlot(n) == slot {
			return n
		}
	}
	t.Fatal("no holder name in the slot")
	return ""
}

// TestRebuildAdversary2_AMissingHolderWithAnEventDeliveredMidRebuildIsRefused: Redis has
// lost a holder's hash (a DEL by hand, an eviction) while its latest event, a
// debit of 30.00, is still in the slot's outbox. The relay delivers that event
// after rebuild read the ledger (seq 1) and before rebuild writes.
//
// Before (the defect this test caught): Rebuild writes the ledger's stale seq-1 state (100.00) back
// and reports it rebuilt: Redis now has seq 1 and 100.00 while the ledger has
// seq 2 and 70.00; reconcile reports pg_ahead and the 30.00 the holder paid
// can be spent again (the next instruction forks the histories).
//
// The contract: docs/ledger.md, Rebuild, the table's last row: "any seq,
// with events past the ledger's seq still on their way: in the holder's
// outbox, or applied by the ledger after rebuild read it | refuses | refuses"
// (and engine.ErrInFlight's comment). Rebuild must refuse and write nothing.
//
// The fix was in: engine.RestoreUnlessArrived calls checkInFlight with
// ahead = cur != nil && cur.Seq > s.Seq, so for a holder Redis lacks (cur nil)
// the ledger is never asked again (arrived) after the outbox was read; an
// event that left the outbox between Rebuild's ledger read and the WATCH goes
// unnoticed.
func TestRebuildAdversary2_AMissingHolderWithAnEventDeliveredMidRebuildIsRefused(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	h := "adv2-lost-" + time.Now().Format("150405.000000")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00"))
	require.NoError(t, err)
	r.deliver(t, h)
	_, err = r.eng.Apply(ctx, instructions.New("pay-1", h).Debit("CNY", "30.00"))
	require.NoError(t, err)
	require.Len(t, r.eventsOf(t, h), 1, "the debit waits in the outbox")

	// Redis loses the holder's hash; the outbox keeps the debit's event.
	require.NoError(t, r.rdb.Del(ctx, cluster.Holder(h)).Err())

	beforeRestore = func() { r.deliver(t, h) }
	t.Cleanup(func() { beforeRestore = nil })
	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
	beforeRestore = nil
	require.NoError(t, err)
	a, err := r.led.Arrivals(ctx, []string{h})
	require.NoError(t, err)
	require.Equal(t, int64(2), a[h].Head, "the ledger has the debit")

	assert.Zero(t, res.Rebuilt, "the debit reached the ledger after rebuild read it: rebuild must refuse: %+v", res)
	if assert.Len(t, res.Refused, 1, "%+v", res) {
		assert.Contains(t, res.Refused[0], "on their way")
	}
	rep := r.run(t)
	for _, fd := range rep.Findings {
		assert.NotEqual(t, KindPGAhead, fd.Kind, "rebuild took Redis behind the ledger: %+v", fd)
	}
	if st, err := r.eng.State(ctx, h); err == nil {
		assert.NotEqual(t, "100.00", st.Balances["CNY"].Available, "the 30.00 paid is back in Redis: it can be spent again")
	}
}

// TestRebuildAdversary2_AWriteToTheSlotDuringRebuildIsNotAFailure: rebuild
// --force of a holder Redis has ahead (here a seq moved by hand, as
// TestRebuild_RestoresDeletedHolder does; a diverged holder, the documented
// use of --force, is the same) while another holder of the same slot takes
// an instruction: its event lands in the slot's outbox, which Restore
// WATCHes, between the outbox read and the EXEC (the test holds Rebuild in
// its second ledger read, led.Arrivals, with a table lock, to make the
// moment certain; in production that read is a PostgreSQL round trip, and
// the relay's XDELs of the slot's other holders' events hit it as well).
//
// Before (the defect this test caught): the EXEC is aborted, go-redis returns redis.TxFailedErr,
// which redisFailure maps to INTERNAL ("a bug", DESIGN.md, Errors), and
// Rebuild returns that error at once: the holder is neither rebuilt nor
// refused, and the holders after it in the list (a second holder here, one
// Redis lost) are not rebuilt at all; engined rebuild exits 2 ("could not
// run").
//
// The contract: an ordinary write to another holder of the slot is
// not a failure of the rebuild, nor a bug: docs/ledger.md, Rebuild, says
// the outbox is watched so that "the relay deleting an event after that
// read makes the write fail", i.e. the write is tried again on fresh reads
// (or the holder refused with a reason), and "engined rebuild --all" is
// meant to run with the relay running ("Run rebuild with the relay running,
// and reconcile first"). Rebuild should retry (or refuse that one holder)
// and go on with the others.
//
// The fix was in: engine.RestoreUnlessArrived (no retry of the WATCH on
// redis.TxFailedErr, mapped to INTERNAL by redisFailure) and
// reconcile.Rebuild (any other error aborts the whole run).
func TestRebuildAdversary2_AWriteToTheSlotDuringRebuildIsNotAFailure(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	dsn := r.dsn
	ctx := context.Background()
	tag := time.Now().Format("150405.000000")
	h, lost := "adv2-force-"+tag, "adv2-gone-"+tag
	other := adv2SameSlot(t, h)
	for _, x := range []string{h, other, lost} {
		_, err := r.eng.Apply(ctx, instructions.New("open", x).Open().Credit("CNY", "100.00"))
		require.NoError(t, err)
		r.deliver(t, x)
	}
	// Redis ahead of the ledger, nothing in the outbox; and a holder Redis lost.
	require.NoError(t, r.rdb.HIncrBy(ctx, cluster.Holder(h), stored.FieldSeq, 1).Err())
	require.NoError(t, r.rdb.Del(ctx, cluster.Holder(lost)).Err())

	// Hold Rebuild in its read of ledger.parked (led.Arrivals, inside the
	// WATCH): the lock is taken once Rebuild has read the ledger's snapshots.
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	lock, err := conn.Begin(ctx)
	require.NoError(t, err)
	poll, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = poll.Close(context.Background()) })
	locked := make(chan error, 1)
	first := true
	beforeRestore = func() {
		if first {
			first = false
			_, err := lock.Exec(ctx, "LOCK TABLE ledger.parked IN ACCESS EXCLUSIVE MODE")
			locked <- err
		}
	}
	t.Cleanup(func() { beforeRestore = nil })

	type out struct {
		res RebuildResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Rebuild(ctx, r.eng, r.led, []string{h, lost}, true)
		done <- out{res, err}
	}()
	require.NoError(t, <-locked)
	// Wait until Rebuild waits on the lock.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		require.NoError(t, poll.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%ledger.parked%' AND pid <> pg_backend_pid()`).Scan(&n))
		if n > 0 {
			break
		}
		select {
		case o := <-done:
			t.Fatalf("rebuild ended before: %+v %v", o.res, o.err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "rebuild never reached the ledger's second read")
		time.Sleep(20 * time.Millisecond)
	}
	// Another holder of the slot takes an instruction meanwhile.
	_, err = r.eng.Apply(ctx, instructions.New("meanwhile", other).Credit("CNY", "1.00"))
	require.NoError(t, err)
	require.NoError(t, lock.Commit(ctx))
	o := <-done

	assert.NoError(t, o.err, "a write to another holder of the slot is not a failure of the rebuild")
	assert.Equal(t, 2, o.res.Rebuilt+len(o.res.Refused), "each holder rebuilt or refused with a reason: %+v", o.res)
	st, err := r.eng.State(ctx, lost)
	if assert.NoError(t, err, "the holder after it in the list is rebuilt") {
		assert.Equal(t, "100.00", st.Balances["CNY"].Available)
	}
	var e *engine.Error
	if o.err != nil && assert.ErrorAs(t, o.err, &e) {
		assert.NotEqual(t, instructions.CodeInternal, e.Code, "not a bug: %v", o.err)
	}

}

// TestRebuildAdversary2_AFieldThatIsNotANumberIsAMismatch: one
// holder's balance field is overwritten outside the engine with text that is
// not a decimal integer ("1e3": Lua's tonumber reads it as 1000, DESIGN.md
// rule 4). Every other holder is sound.
//
// Before (the defect this test caught): reconcile.Run fails as a whole with INTERNAL (engined
// reconcile exits 2, "could not run", and writes no report) instead of
// reporting that holder's figures; rebuild --force of the holder fails with
// INTERNAL too, so the documented repair of a tampered figure cannot run.
//
// The contract: docs/ledger.md, Reconciliation: "mismatch | same seq, a
// figure differs (listed) | yes", "exits 0 only without drift" (1 with it);
// Rebuild: "--force repairs what reconcile reports as a mismatch" and "writes
// the ledger's figures" over a holder "changed outside the engine". Run's
// own doc lists as errors only Redis's unavailability and PostgreSQL's. A
// stored value that is not a number is a figure that differs from the
// ledger's: report it as a mismatch of that holder, and let --force write
// the ledger's state over it.
//
// The fix was in: engine.Snapshots and engine.RestoreUnlessArrived return INTERNAL
// when stored.ParseHolder meets a value that is not a number; reconcile.Run
// and reconcile.Rebuild pass that error up.
func TestRebuildAdversary2_AFieldThatIsNotANumberIsAMismatch(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	tag := time.Now().Format("150405.000000")
	h, ok := "adv2-nan-"+tag, "adv2-ok-"+tag
	for _, x := range []string{h, ok} {
		_, err := r.eng.Apply(ctx, instructions.New("open", x).Open().Credit("CNY", "100.00"))
		require.NoError(t, err)
		r.deliver(t, x)
	}
	require.False(t, r.run(t).Drift)

	require.NoError(t, r.rdb.HSet(ctx, cluster.Holder(h), stored.PrefixBalance+"CNY", "1e3").Err())

	rep, err := Run(ctx, r.eng, r.led, nil)
	if assert.NoError(t, err, "one holder's figure is drift to report, not a reason to report nothing") {
		assert.True(t, rep.Drift)
		assert.Equal(t, []string{KindMismatch}, kinds(rep), "%+v", rep.Findings)
		assert.Equal(t, 1, rep.InSync, "the sound holder")
	}
	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, true)
	assert.NoError(t, err, "--force writes the ledger's figures over a tampered one")
	assert.Equal(t, 1, res.Rebuilt, "%+v", res)
	assert.Equal(t, "10000", r.rawHolder(t, h)[stored.PrefixBalance+"CNY"])

	// The seq itself, read as 0: a mismatch too, not the ledger ahead.
	require.NoError(t, r.rdb.HSet(ctx, cluster.Holder(h), stored.FieldSeq, "1x").Err())
	rep, err = Run(ctx, r.eng, r.led, nil)
	require.NoError(t, err)
	require.Equal(t, []string{KindMismatch}, kinds(rep), "%+v", rep.Findings)
	assert.Contains(t, rep.Findings[0].Difference, `not a number in redis: seq "1x"`)
	res, err = Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	require.Len(t, res.Refused, 1, "%+v", res)
	assert.NotContains(t, res.Refused[0], "seq and digest", "its seq is not the ledger's")
	assert.Contains(t, res.Refused[0], `not a number in redis: seq "1x"`)
}

// TestRebuildAdversary2_ALostExpiryIndexEntryIsNotInSync: a holder's open
// hold with a TTL has its entry in the slot's expiry index ({<tag>}:expiry),
// which the sweeper reads to release it once expired. Here only that entry is
// lost (ZREM by hand, or a key lost on its own); the holder's hash is whole.
//
// Before (the defect this test caught): rebuild, with and without --force, calls the holder in sync
// and writes nothing: the entry stays lost, and the sweeper never releases
// the hold, whose funds stay frozen past its expiry until a client releases
// them itself.
//
// The contract: docs/ledger.md, Rebuild: it "writes a holder's Redis
// state from the ledger (its hash ..., and the holder's expiry index
// entries)" and "Under the same WATCH it reads the holder's whole state and
// compares it with the ledger's"; with --force it "writes the ledger's
// state". The ledger has the hold with its expiry; the index entry it implies
// is missing: that is not the whole state, not "in sync", and --force must
// write the entry back.
//
// The fix was in: engine.RestoreUnlessArrived compares the hash alone
// (stored.Differences) and returns without writing when it agrees, whatever
// force says; the expiry index is never read.
func TestRebuildAdversary2_ALostExpiryIndexEntryIsNotInSync(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	h := "adv2-exp-" + time.Now().Format("150405.000000")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00").Freeze("CNY", "40.00", "o-1", time.Hour))
	require.NoError(t, err)
	r.deliver(t, h)
	exp := cluster.Expiry(cluster.HolderSlot(h))
	score, err := r.rdb.ZScore(ctx, exp, h+" o-1").Result()
	require.NoError(t, err)
	require.False(t, r.run(t).Drift)

	require.NoError(t, r.rdb.ZRem(ctx, exp, h+" o-1").Err())
	rep := r.run(t)
	assert.True(t, rep.Drift, "reconcile reports the lost entry")
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, KindMismatch, rep.Findings[0].Kind)
	assert.Equal(t, []string{"hold o-1: no entry in the expiry index, due at " + strconv.FormatInt(int64(score), 10)}, rep.Findings[0].Difference)
	require.NoError(t, r.rdb.ZAdd(ctx, exp, redis.Z{Score: score + 1, Member: h + " o-1"}).Err())
	assert.Equal(t, []string{"hold o-1: due at " + strconv.FormatInt(int64(score)+1, 10) + " in the expiry index, " +
		strconv.FormatInt(int64(score), 10) + " in the snapshot"}, r.run(t).Findings[0].Difference)

	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	assert.Zero(t, res.InSync, "the hold's expiry index entry is missing: not in sync: %+v", res)
	res, err = Rebuild(ctx, r.eng, r.led, []string{h}, true)
	require.NoError(t, err)
	got, err := r.rdb.ZScore(ctx, exp, h+" o-1").Result()
	assert.NoError(t, err, "--force writes the expiry index entry back: %+v", res)
	assert.Equal(t, score, got)
}
