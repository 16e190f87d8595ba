package reconcile

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// TestReconcile_TransferInFlightThenUnbalanced relays events by hand (no
// relay runs): the buyer's part of a trade reaches the ledger whole, the
// seller's not at all, then only its prepare.
func TestReconcile_TransferInFlightThenUnbalanced(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	buyer, seller, id := "buy-"+tag, "sell-"+tag, "trade-"+tag
	for _, in := range []instructions.Instruction{
		instructions.New("o", buyer).Open().Credit("USDT", "1000").Freeze("USDT", "500", "ord-b", time.Hour),
		instructions.New("o", seller).Open().Credit("BTC", "1").Freeze("BTC", "0.5", "ord-s", time.Hour),
	} {
		_, err := r.eng.Apply(ctx, in)
		require.NoError(t, err)
	}
	st, err := r.eng.Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
		{Holder: buyer, Ops: instructions.Instruction{}.SettleLeg("ord-b", "USDT", "100").Credit("BTC", "0.002").Ops},
		{Holder: seller, Ops: instructions.Instruction{}.SettleLeg("ord-s", "BTC", "0.002").Credit("USDT", "100").Ops}}})
	require.NoError(t, err)
	require.True(t, st.Complete, "%+v", st)
	sellerEvents := r.eventsOf(t, seller)
	require.Len(t, sellerEvents, 3, "open, prepare, commit")
	require.NoError(t, r.led.Write(ctx, stored.Entries(append(r.eventsOf(t, buyer), sellerEvents[0])...)))

	t.Run("one part's events relayed, the other's on their way: in flight, not drift", func(t *testing.T) {
		rep := r.run(t)
		assert.False(t, rep.Drift)
		assert.Equal(t, 1, rep.Counts[KindTransferInFlight])
		assert.Equal(t, 1, rep.Counts[KindInFlight], "the seller")
		assert.Equal(t, int64(2), rep.EventsInFlight)
		require.Len(t, rep.Transfers, 1)
		tf := rep.Transfers[0]
		assert.Equal(t, KindTransferInFlight, tf.Kind)
		assert.Equal(t, id, tf.Transfer)
		assert.Equal(t, engine.TransferCommitted, tf.Status)
		assert.True(t, tf.Complete)
		assert.Equal(t, map[string]string{"USDT": "100000000", "BTC": "-200000"}, tf.Clearing)
		assert.Equal(t, int64(1), tf.Prepared)
		assert.Equal(t, int64(1), tf.Committed)
		assert.Equal(t, []string{buyer}, tf.Holders)
	})

	require.NoError(t, r.led.Write(ctx, stored.Entries(sellerEvents[1:2]...)))
	t.Run("past the timeout, still in flight while the seller's commit is on its way", func(t *testing.T) {
		rep, err := Run(ctx, r.eng, r.led, &Options{TransferTimeout: time.Millisecond})
		require.NoError(t, err)
		assert.False(t, rep.Drift)
		assert.Equal(t, 1, rep.Counts[KindTransferInFlight])
	})

	// What a failover without a replica does to the seller: Redis is back
	// to what the ledger has, its commit lost with its event, while the
	// record says the transfer is complete. Nothing is on its way any more.
	snaps, err := r.led.Snapshots(ctx, []string{seller}, 0)
	require.NoError(t, err)
	es := *snaps[seller]
	outbox := cluster.Outbox(cluster.HolderSlot(seller))
	for _, m := range r.rdb.XRange(ctx, outbox, "-", "+").Val() {
		if seq, _ := strconv.ParseInt(m.Values["seq"].(string), 10, 64); m.Values["holder"] == seller && seq > es.Seq {
			require.NoError(t, r.rdb.XDel(ctx, outbox, m.ID).Err())
		}
	}
	_, err = r.eng.Restore(ctx, &es, true)
	require.NoError(t, err)

	t.Run("younger than the timeout, nothing on its way: in flight still", func(t *testing.T) {
		// Younger however long the steps above took on a loaded machine.
		require.NoError(t, r.rdb.HSet(ctx, cluster.Transfer(id), "created_ms", time.Now().UnixMilli()).Err())
		rep := r.run(t)
		assert.False(t, rep.Drift)
		assert.Zero(t, rep.Counts[KindInFlight])
		assert.Equal(t, 1, rep.Counts[KindTransferInFlight])
	})
	t.Run("past the timeout, nothing on its way: unbalanced, drift", func(t *testing.T) {
		created := time.Now().Add(-engine.DefaultTransferTimeout - time.Second).UnixMilli()
		require.NoError(t, r.rdb.HSet(ctx, cluster.Transfer(id), "created_ms", created).Err())
		rep := r.run(t)
		assert.True(t, rep.Drift)
		assert.Empty(t, rep.Findings, "every holder agrees with the ledger")
		assert.Equal(t, 1, rep.Counts[KindTransferUnbalanced])
		require.Len(t, rep.Transfers, 1)
		assert.Equal(t, KindTransferUnbalanced, rep.Transfers[0].Kind)
		assert.GreaterOrEqual(t, rep.Transfers[0].AgeMs, engine.DefaultTransferTimeout.Milliseconds())
	})
}

// TestReconcile_TransfersRelayedInSync runs the relay: once it has carried
// every part, the ledger has the transfers balanced and reconcile has nothing
// to say about them.
func TestReconcile_TransfersRelayedInSync(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	a, b := "a-"+tag, "b-"+tag
	for _, h := range []string{a, b} {
		_, err := r.eng.Apply(ctx, instructions.New("o", h).Open().Credit("CNY", "100.00"))
		require.NoError(t, err)
	}
	for i := range 5 {
		st, err := r.eng.Transfer(ctx, instructions.Transfer{ID: "pay-" + tag + "-" + strconv.Itoa(i), Parts: []instructions.Part{
			{Holder: a, Ops: instructions.Instruction{}.Debit("CNY", "3.00").Ops},
			{Holder: b, Ops: instructions.Instruction{}.Credit("CNY", "3.00").Ops}}})
		require.NoError(t, err)
		require.True(t, st.Complete, "%+v", st)
	}
	rep := r.waitInSync(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Equal(t, 2, rep.InSync)
	assert.Empty(t, rep.Transfers)
	var n, nonzero int
	require.NoError(t, r.led.Pool().QueryRow(ctx, `SELECT count(DISTINCT transfer), count(*) FILTER (WHERE clearing <> 0 OR committed <> 2)
		FROM ledger.transfer_balances`).Scan(&n, &nonzero))
	assert.Equal(t, 5, n)
	assert.Zero(t, nonzero)
}

// TestReconcile_LostInRelay relays by hand (no relay runs): a holder's
// event is deleted from its outbox without reaching the ledger, as a relay
// that acknowledged an event PostgreSQL never committed would. Redis is
// ahead of the ledger, but that event is on its way no more: lost_in_relay,
// with its seq, and drift.
func TestReconcile_LostInRelay(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	lost, queued := "lost-"+tag, "queued-"+tag
	for _, h := range []string{lost, queued} {
		_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "10.00"))
		require.NoError(t, err)
		for i := range 3 {
			_, err := r.eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
			require.NoError(t, err)
		}
	}
	outbox := cluster.Outbox(cluster.HolderSlot(lost))
	msgs, err := r.rdb.XRange(ctx, outbox, "-", "+").Result()
	require.NoError(t, err)
	ids := map[string]string{} // seq -> entry id, of the holder that loses one
	var events []map[string]string
	for _, m := range msgs {
		if m.Values["holder"] == lost {
			ids[m.Values["seq"].(string)] = m.ID
			f := map[string]string{}
			for k, v := range m.Values {
				f[k] = v.(string)
			}
			events = append(events, f)
		}
	}
	require.Len(t, events, 4)
	// Seq 1 reaches the ledger, and seq 4 too, parked behind the gap.
	require.NoError(t, r.led.Write(ctx, stored.Entries(events[0], events[3])))

	t.Run("before any event is lost, Redis ahead is in flight", func(t *testing.T) {
		rep := r.run(t)
		assert.False(t, rep.Drift, "%+v", rep)
		assert.Equal(t, 2, rep.Counts[KindInFlight])
		assert.Equal(t, int64(3+4), rep.EventsInFlight)
	})

	// The relay deletes what the ledger committed, seqs 1 and 4, and seq 2
	// that it never committed.
	require.NoError(t, r.rdb.XDel(ctx, outbox, ids["1"], ids["2"], ids["4"]).Err())
	rep := r.run(t)
	assert.True(t, rep.Drift)
	assert.Equal(t, 1, rep.Counts[KindLostInRelay])
	assert.Equal(t, 1, rep.Counts[KindInFlight])
	assert.Equal(t, int64(4), rep.EventsInFlight, "the other holder's, all still in the outbox")
	require.Len(t, rep.Findings, 2)
	for _, fd := range rep.Findings {
		switch fd.Holder {
		case lost:
			assert.Equal(t, Finding{Holder: lost, Kind: KindLostInRelay, RedisSeq: 4, LedgerSeq: 1, Lost: 1, LostSeqs: []int64{2}}, fd)
		case queued:
			assert.Equal(t, Finding{Holder: queued, Kind: KindInFlight, RedisSeq: 4, InFlight: 4}, fd)
		default:
			t.Errorf("unexpected finding %+v", fd)
		}
	}
}

// TestReconcile_NoLossInventedUnderLoad runs reconcile again and again while
// clients write and the relay carries their events: the ledger only ever
// holds what Redis applied, so no round may report it ahead (lost writes),
// nor an event lost on its way, nor any other drift. Between its two reads
// of each round, reconcile waits for the relay to commit twice (the second
// write read the outboxes after reconcile's first read): read in the wrong
// order, the ledger would then be ahead in every round.
func TestReconcile_NoLossInventedUnderLoad(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	relay := r.startRelay(t)
	betweenReads = func() {
		// The writers keep the relay busy: two commits come, however slow
		// the machine; a round without them would not test the order.
		start, deadline := relay.Stats().Batches, time.Now().Add(2*time.Minute)
		for relay.Stats().Batches < start+2 {
			if !assert.True(t, time.Now().Before(deadline), "the relay committed no two batches between reconcile's reads") {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Cleanup(func() { betweenReads = nil })
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	const writers, rounds = 4, 40
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		h := "load-" + tag + "-" + strconv.Itoa(w)
		_, err := r.eng.Apply(ctx, instructions.New("open", h).Open())
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "0.01")); err != nil {
					errs <- err
					return
				}
				// A steady trickle, not a flood: the relay keeps up, and the
				// ledger stays small enough for 40 rounds of reconcile.
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	busy := 0 // rounds that saw events in flight: the relay had work while reconcile read
	for i := range rounds {
		rep := r.run(t)
		assert.False(t, rep.Drift, "round %d: %+v", i, rep.Findings)
		assert.Zero(t, rep.Counts[KindPGAhead], "round %d", i)
		assert.Zero(t, rep.Counts[KindLostInRelay], "round %d", i)
		if rep.EventsInFlight > 0 {
			busy++
		}
	}
	betweenReads = nil // the writers stop: no more batches to wait for
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Positive(t, busy, "no round saw an event in flight: the load did not overlap reconcile")
	assert.False(t, r.waitInSync(t).Drift)
}
