package reconcile

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger/ledgertest"
	"github.com/atomledger/atomledger/outbox"
)

// dumpHolder reads everything Redis keeps of holder: its hash, its
// idempotency records, its events in the slot's outbox and its expiry index
// entries, as text, to compare a holder's whole state before and after.
func (r *ledgerRig) dumpHolder(t *testing.T, holder string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range holderKeys(t, r.rdb, holder) {
		switch typ := r.rdb.Type(ctx, k).Val(); typ {
		case "hash":
			out[k] = fmt.Sprint(r.rdb.HGetAll(ctx, k).Val())
		default:
			out[k] = typ + " " + r.rdb.Get(ctx, k).Val()
		}
	}
	for i, f := range r.eventsOf(t, holder) {
		out[fmt.Sprintf("event %d", i)] = fmt.Sprint(f)
	}
	slot := cluster.HolderSlot(holder)
	for _, z := range r.rdb.ZRangeWithScores(ctx, cluster.Expiry(slot), 0, -1).Val() {
		out[fmt.Sprint("expiry ", z.Member)] = fmt.Sprint(z.Score)
	}
	return out
}

// TestReconcileAdversary_ForceRebuildOverEventsOnTheirWay forces a rebuild
// over a holder that Redis has ahead of the ledger only because its latest
// events have not been relayed yet. Written over, Redis would forget a debit
// its client was answered for while the ledger, once the relay delivers it,
// has it: the ledger ahead, and the holder free to spend the money again.
// Rebuild must refuse, even with force, whether the events are still in the
// outbox or reached the ledger after rebuild read it, and change nothing.
func TestReconcileAdversary_ForceRebuildOverEventsOnTheirWay(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	h := "ahead-" + time.Now().Format("150405.000000")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00"))
	require.NoError(t, err)
	r.deliver(t, h)

	_, err = r.eng.Apply(ctx, instructions.New("pay-1", h).Debit("CNY", "30.00"))
	require.NoError(t, err)
	rep := r.run(t)
	require.Equal(t, []string{KindInFlight}, kinds(rep), "the debit is on its way")
	before := r.dumpHolder(t, h)

	t.Run("events still in the outbox", func(t *testing.T) {
		res, err := Rebuild(ctx, r.eng, r.led, []string{h}, true)
		require.NoError(t, err)
		assert.Zero(t, res.Rebuilt)
		require.Len(t, res.Refused, 1, "%+v", res)
		assert.Contains(t, res.Refused[0], "on their way")
		assert.Equal(t, before, r.dumpHolder(t, h), "nothing changed")
	})

	t.Run("events that reached the ledger after rebuild read it", func(t *testing.T) {
		beforeRestore = func() { r.deliver(t, h) }
		t.Cleanup(func() { beforeRestore = nil })
		res, err := Rebuild(ctx, r.eng, r.led, []string{h}, true)
		require.NoError(t, err)
		assert.Zero(t, res.Rebuilt)
		require.Len(t, res.Refused, 1, "%+v", res)
		assert.Contains(t, res.Refused[0], "on their way")
		want := maps.Clone(before)
		delete(want, "event 0") // delivered
		assert.Equal(t, want, r.dumpHolder(t, h), "nothing changed")
	})

	r.deliver(t, h)
	rep = r.run(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Empty(t, rep.Findings)
	st, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, "70.00", st.Balances["CNY"].Available, "the debit counted once, on both sides")
}

// TestRelayAdversary_MasterRestartedEmpty restarts the only master empty (no
// persistence: what a node that lost its disk, or FLUSHALL, leaves) while the
// relay runs. Reconcile then reports every holder missing in Redis, rebuild
// restores each one's state, expiry index entries and idempotency records
// from the ledger, a client's retry of an instruction Redis forgot replays
// its first answer (applied once; before the rebuild it finds no holder),
// and the relay finds the outboxes the next
// instructions create, so that the ledger gets them once each.
func TestRelayAdversary_MasterRestartedEmpty(t *testing.T) {
	needRedis(t)
	t.Run("restarted without persistence", func(t *testing.T) {
		loseEverything(t, func(r *ledgerRig) {
			addr := r.c.Nodes[0].Addr
			require.NoError(t, r.c.Kill(addr))
			require.NoError(t, r.c.Restart(context.Background(), addr))
			require.NoError(t, r.c.WaitReady(context.Background()))
		})
	})
	t.Run("FLUSHALL under the relay's live connections", func(t *testing.T) {
		loseEverything(t, func(r *ledgerRig) {
			require.NoError(t, r.rdb.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
				return m.FlushAll(ctx).Err()
			}))
		})
	})
}

// loseEverything is TestRelayAdversary_MasterRestartedEmpty with lose
// emptying the master.
func loseEverything(t *testing.T, lose func(r *ledgerRig)) {
	t.Helper()
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	r.startRelay(t)
	tag := time.Now().Format("150405.000000")
	holders := make([]string, 8)
	pays := make([]instructions.Instruction, len(holders))
	answers := make([]instructions.Result, len(holders))
	for i := range holders {
		h := fmt.Sprintf("empty-%d-%s", i, tag)
		holders[i] = h
		_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00").EarnPoints("50").
			GrantCoupon("c-1", time.Time{}).Freeze("CNY", "10.00", "order-1", time.Hour))
		require.NoError(t, err)
		pays[i] = instructions.New("pay", h).Debit("CNY", "30.00").SpendPoints("20")
		answers[i], err = r.eng.Apply(ctx, pays[i])
		require.NoError(t, err)
	}
	rep := r.waitInSync(t)
	require.False(t, rep.Drift, "%+v", rep)
	require.Equal(t, len(holders), rep.InSync)
	before := map[string]instructions.State{}
	for _, h := range holders {
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		before[h] = st
	}
	expiry := r.rdb.ZRangeWithScores(ctx, cluster.Expiry(cluster.HolderSlot(holders[0])), 0, -1).Val()
	require.NotEmpty(t, expiry)

	lose(r)
	require.Eventually(t, func() bool { return r.rdb.DBSize(ctx).Val() == 0 }, 2*time.Minute, 50*time.Millisecond,
		"the master came back empty")

	rep = r.run(t)
	assert.True(t, rep.Drift)
	assert.Equal(t, len(holders), rep.Counts[KindMissingInRedis], "%+v", rep.Findings)
	assert.Len(t, rep.Findings, len(holders))

	// A client's retry before the rebuild finds no holder, and records nothing.
	_, err := r.eng.Apply(ctx, pays[0])
	require.ErrorIs(t, err, engine.ErrHolderNotFound)
	assert.Zero(t, r.rdb.Exists(ctx, cluster.Tx(holders[0], pays[0].ID)).Val(), "no record of the refusal")

	res, err := Rebuild(ctx, r.eng, r.led, holders, false)
	require.NoError(t, err)
	assert.Equal(t, RebuildResult{Rebuilt: len(holders)}, res)
	for _, h := range holders {
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, before[h], st, "%s restored exactly", h)
	}
	assert.ElementsMatch(t, expiry, r.rdb.ZRangeWithScores(ctx, cluster.Expiry(cluster.HolderSlot(holders[0])), 0, -1).Val(),
		"the expiry index entries are back")

	for i, h := range holders {
		got, err := r.eng.Apply(ctx, pays[i])
		require.NoError(t, err)
		assert.True(t, got.Replayed, "%s: the retry is replayed", h)
		got.Replayed = false
		assert.Equal(t, answers[i], got, "%s: its first answer", h)
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, before[h], st, "%s: applied once", h)
		_, err = r.eng.Apply(ctx, instructions.New("after", h).Credit("CNY", "1.00"))
		require.NoError(t, err)
	}
	rep = r.waitInSync(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Equal(t, len(holders), rep.InSync, "the instructions after the rebuild reached the ledger")
	assert.Empty(t, rep.Refused, "nothing twice")
	for _, h := range holders {
		a, err := r.led.Arrivals(ctx, []string{h})
		require.NoError(t, err)
		assert.Equal(t, int64(3), a[h].Head, "%s: open, pay, after", h)
	}
}

// TestRelayAdversary_TwoRelaysAtOnce runs two relays at once, with small
// batches, while instructions are applied, and stops one of them midway:
// both read every stream from its head, so they deliver the same events
// again and again, and the ledger must still hold each event once, refuse
// none, park none, and agree with Redis.
func TestRelayAdversary_TwoRelaysAtOnce(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	w := ledgertest.New(11, "twin-"+time.Now().Format("150405.000000"), 20)
	r.applyAll(t, w.Opens())
	start := func() (stop func()) {
		rdb := r.c.Client(nil)
		relay := outbox.NewRelay(rdb, r.led, &outbox.Options{
			MaxBatch: 8, PollInterval: 5 * time.Millisecond, DiscoverInterval: 100 * time.Millisecond})
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { _ = relay.Run(rctx); close(done) }()
		var once sync.Once
		stop = func() { once.Do(func() { cancel(); <-done; _ = rdb.Close() }) }
		t.Cleanup(stop)
		return stop
	}
	stopFirst := start()
	start()
	for i := range 10 {
		var ins []instructions.Instruction
		for range 40 {
			ins = append(ins, w.Next())
		}
		r.applyAll(t, ins)
		if i == 5 {
			stopFirst()
		}
	}
	rep := r.waitInSync(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Equal(t, len(w.Holders), rep.InSync)
	assert.Empty(t, rep.Refused, "no event delivered twice was taken for another")
	assert.Zero(t, rep.Parked)
	assert.Empty(t, rep.SetAside)
	snaps, err := r.eng.Snapshots(ctx, w.Holders)
	require.NoError(t, err)
	arrived, err := r.led.Arrivals(ctx, w.Holders)
	require.NoError(t, err)
	for _, h := range w.Holders {
		assert.Equal(t, snaps[h].Seq, arrived[h].Head, "%s: every event once", h)
	}
}

// TestRelayAdversary_PoisonEntries writes entries by hand into the outboxes
// while the relay runs and holders take instructions: one missing most
// fields, one of 2 MiB, one whose holder is not UTF-8, a copy of a delivered
// event in another slot's outbox, and two copies of a holder's latest event
// at its seq with another body (one with a memo that is not UTF-8). None may
// stall the relay or any holder, none may be applied, the outboxes empty,
// every holder ends in sync with its events once each, and reconcile reports
// the malformed ones set aside, none of them as another history (refused):
// the copies at an applied seq carry that event's digest, by which the ledger
// judges a copy, and are skipped as duplicates.
func TestRelayAdversary_PoisonEntries(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOf(t, 1)
	ctx := context.Background()
	tag := time.Now().Format("150405.000000")
	a, b := "victim-"+tag, "bystander-"+tag
	others := []string{b}
	for i := range 6 {
		others = append(others, fmt.Sprintf("other-%d-%s", i, tag))
	}
	all := append([]string{a}, others...)
	credit := func() {
		for _, h := range all {
			_, err := r.eng.Apply(ctx, instructions.New(fmt.Sprintf("c-%d", time.Now().UnixNano()), h).Credit("CNY", "1.00"))
			require.NoError(t, err)
		}
	}
	for _, h := range all {
		_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00"))
		require.NoError(t, err)
	}
	credit()
	// A's latest event and B's first, read before the relay runs: once it
	// does, it may deliver and delete them at any moment.
	latest, first := r.eventsOf(t, a), r.eventsOf(t, b)
	require.NotEmpty(t, latest)
	require.NotEmpty(t, first)
	r.startRelay(t)
	conflict := maps.Clone(latest[len(latest)-1])
	conflict["ops"] = strings.Replace(conflict["ops"], `"100"`, `"999900"`, -1)
	conflict["ops"] = strings.Replace(conflict["ops"], `"units":"`, `"units":"9`, 1)
	notText := maps.Clone(latest[len(latest)-1])
	notText["memo"] = "\xff\xfe"
	outbox := cluster.Outbox(cluster.HolderSlot(a))
	otherSlot := (cluster.HolderSlot(b) + 1) % cluster.Slots
	poison := []struct {
		stream string
		fields map[string]string
	}{
		{outbox, map[string]string{"holder": a, "seq": "3"}},
		{outbox, map[string]string{"holder": a, "seq": "4", "junk": strings.Repeat("x", 2<<20)}},
		{outbox, map[string]string{"holder": "\xff\xfe", "seq": "1", "memo": "\xff"}},
		{cluster.Outbox(otherSlot), first[0]},
		{outbox, conflict},
		{outbox, notText},
	}
	for _, p := range poison {
		require.NoError(t, r.rdb.XAdd(ctx, &redis.XAddArgs{Stream: p.stream, Values: p.fields}).Err())
	}
	for range 3 {
		credit()
	}

	var rep *Report
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rep = r.run(t)
		if (rep.InSync == len(all) && len(rep.SetAside) >= 3) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%+v", rep)
	assert.Equal(t, len(all), rep.InSync, "every holder in sync, the victim too: %+v", rep.Findings)
	assert.True(t, rep.Drift, "the poison is reported")
	assert.Zero(t, rep.Parked, "nothing waits behind a poison entry")
	assert.Empty(t, rep.Refused, "events set aside as malformed, and copies carrying an applied event's digest, tell of no other history")
	var reasons []string
	for _, sa := range rep.SetAside {
		reasons = append(reasons, sa.Reason)
	}
	assert.Len(t, rep.SetAside, 3, "the malformed ones: %q", reasons)
	snaps, err := r.eng.Snapshots(ctx, all)
	require.NoError(t, err)
	arrived, err := r.led.Arrivals(ctx, all)
	require.NoError(t, err)
	for _, h := range all {
		assert.Equal(t, snaps[h].Seq, arrived[h].Head, "%s: every event once", h)
		assert.Equal(t, int64(5), snaps[h].Seq, h)
	}
	require.Eventually(t, func() bool {
		return r.rdb.XLen(ctx, outbox).Val() == 0 && r.rdb.XLen(ctx, cluster.Outbox(otherSlot)).Val() == 0
	}, 2*time.Minute, 50*time.Millisecond, "the outboxes empty")
}
