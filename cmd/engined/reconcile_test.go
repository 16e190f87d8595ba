package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// eventsOf reads holder's events from its slot's outbox, in seq order.
func (r *ledgerRig) eventsOf(t *testing.T, holder string) []map[string]string {
	t.Helper()
	msgs, err := r.rdb.XRange(context.Background(), cluster.Outbox(cluster.HolderSlot(holder)), "-", "+").Result()
	require.NoError(t, err)
	var out []map[string]string
	for _, m := range msgs {
		f := map[string]string{}
		for k, v := range m.Values {
			f[k] = v.(string)
		}
		if f["holder"] == holder {
			out = append(out, f)
		}
	}
	return out
}

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
	require.NoError(t, r.led.Write(ctx, append(r.eventsOf(t, buyer), sellerEvents[0])))

	t.Run("one part's events relayed, the other's on their way: in flight, not drift", func(t *testing.T) {
		rep, err := reconcile(ctx, r.eng, r.led, nil)
		require.NoError(t, err)
		assert.False(t, rep.Drift)
		assert.Equal(t, 1, rep.Counts[kindTransferInFlight])
		assert.Equal(t, 1, rep.Counts[kindInFlight], "the seller")
		assert.Equal(t, int64(2), rep.EventsInFlight)
		require.Len(t, rep.Transfers, 1)
		tf := rep.Transfers[0]
		assert.Equal(t, kindTransferInFlight, tf.Kind)
		assert.Equal(t, id, tf.Transfer)
		assert.Equal(t, engine.TransferCommitted, tf.Status)
		assert.True(t, tf.Complete)
		assert.Equal(t, map[string]string{"USDT": "100000000", "BTC": "-200000"}, tf.Clearing)
		assert.Equal(t, int64(1), tf.Prepared)
		assert.Equal(t, int64(1), tf.Committed)
		assert.Equal(t, []string{buyer}, tf.Holders)
	})

	require.NoError(t, r.led.Write(ctx, sellerEvents[1:2]))
	t.Run("past the timeout, still in flight while the seller's commit is on its way", func(t *testing.T) {
		rep, err := reconcileWithin(ctx, r.eng, r.led, nil, time.Millisecond)
		require.NoError(t, err)
		assert.False(t, rep.Drift)
		assert.Equal(t, 1, rep.Counts[kindTransferInFlight])
	})

	// What a failover without a replica does to the seller: Redis is back
	// to what the ledger has, its commit lost, while the record says the
	// transfer is complete. Nothing is on its way any more.
	snaps, err := r.led.Snapshots(ctx, []string{seller}, 0)
	require.NoError(t, err)
	es := engine.Snapshot(*snaps[seller])
	_, err = r.eng.Restore(ctx, &es, true)
	require.NoError(t, err)

	t.Run("younger than the timeout, nothing on its way: in flight still", func(t *testing.T) {
		rep, err := reconcile(ctx, r.eng, r.led, nil)
		require.NoError(t, err)
		assert.False(t, rep.Drift)
		assert.Zero(t, rep.Counts[kindInFlight])
		assert.Equal(t, 1, rep.Counts[kindTransferInFlight])
	})
	t.Run("past the timeout, nothing on its way: unbalanced, drift", func(t *testing.T) {
		created := time.Now().Add(-engine.DefaultTransferTimeout - time.Second).UnixMilli()
		require.NoError(t, r.rdb.HSet(ctx, cluster.Transfer(id), "created_ms", created).Err())
		out := filepath.Join(t.TempDir(), "report.json")
		code, stdout, stderr := r.run("reconcile", "--out", out)
		assert.Equal(t, exitDrift, code, "stderr: %s", stderr)
		assert.Regexp(t, `transfers unbalanced past the timeout\s*\|\s*1\s*\|\s*yes`, stdout)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var rep Report
		require.NoError(t, json.Unmarshal(data, &rep))
		assert.True(t, rep.Drift)
		assert.Empty(t, rep.Findings, "every holder agrees with the ledger")
		assert.Equal(t, 1, rep.Counts[kindTransferUnbalanced])
		require.Len(t, rep.Transfers, 1)
		assert.Equal(t, kindTransferUnbalanced, rep.Transfers[0].Kind)
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
	r.startRelay(t, nil)
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
	rep := r.waitInSync(t, 30*time.Second)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Equal(t, 2, rep.InSync)
	assert.Empty(t, rep.Transfers)
	var n, nonzero int
	require.NoError(t, r.led.Pool().QueryRow(ctx, `SELECT count(DISTINCT transfer), count(*) FILTER (WHERE clearing <> 0 OR committed <> 2)
		FROM ledger.transfer_balances`).Scan(&n, &nonzero))
	assert.Equal(t, 5, n)
	assert.Zero(t, nonzero)
}

// reconcile is reconcileWithin with the default transfer timeout, as the
// tests that are not about transfers run it.
func reconcile(ctx context.Context, eng *engine.Engine, led *ledger.Ledger, progress io.Writer) (*Report, error) {
	return reconcileWithin(ctx, eng, led, progress, engine.DefaultTransferTimeout)
}
