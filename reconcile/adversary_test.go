package reconcile

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
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
	// What the relay does with the holder's events: write them to the
	// ledger, then delete them from the outbox.
	deliver := func(t *testing.T) {
		outbox := cluster.Outbox(cluster.HolderSlot(h))
		msgs, err := r.rdb.XRange(ctx, outbox, "-", "+").Result()
		require.NoError(t, err)
		require.NoError(t, r.led.Write(ctx, stored.Entries(r.eventsOf(t, h)...)))
		for _, m := range msgs {
			require.NoError(t, r.rdb.XDel(ctx, outbox, m.ID).Err())
		}
	}
	deliver(t)

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
		beforeRestore = func() { deliver(t) }
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

	deliver(t)
	rep = r.run(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Empty(t, rep.Findings)
	st, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, "70.00", st.Balances["CNY"].Available, "the debit counted once, on both sides")
}
