package reconcile

import (
	"context"
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
	"github.com/atomledger/atomledger/stored"
)

func TestRebuild_RestoresDeletedHolder(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	w := ledgertest.New(7, "rb", 20)
	r.startRelay(t)
	r.applyAll(t, w.Opens())
	var ins []instructions.Instruction
	for range 500 {
		ins = append(ins, w.Next())
	}
	r.applyAll(t, ins)
	// A hold that expires, to see the expiry index rebuilt.
	h := w.Holders[0]
	_, err := r.eng.Apply(ctx, instructions.New("rb-hold", h).Credit("CNY", "5.00").Freeze("CNY", "1.00", "rb-h", time.Hour))
	require.NoError(t, err)
	rep := r.waitInSync(t)
	require.False(t, rep.Drift, "%+v", rep)

	before, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	rdb := r.c.Client(nil)
	defer rdb.Close()
	hk := cluster.Holder(h)
	slot := cluster.HolderSlot(h)
	score, err := rdb.ZScore(ctx, cluster.Expiry(slot), h+" rb-h").Result()
	require.NoError(t, err)
	require.NoError(t, rdb.Del(ctx, hk).Err())
	require.NoError(t, rdb.ZRem(ctx, cluster.Expiry(slot), h+" rb-h").Err())

	assert.Equal(t, []string{KindMissingInRedis}, kinds(r.run(t)), "Run flags the missing holder")

	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	assert.Equal(t, RebuildResult{Rebuilt: 1}, res)
	after, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, before, after, "State is restored exactly")
	got, err := rdb.ZScore(ctx, cluster.Expiry(slot), h+" rb-h").Result()
	require.NoError(t, err)
	assert.Equal(t, score, got, "the expiry index entry is back")

	rep = r.run(t)
	assert.False(t, rep.Drift, "clean again: %+v", rep)

	t.Run("a holder where Redis is ahead is refused, unless forced", func(t *testing.T) {
		// Move Redis ahead of the ledger by hand (the relay would catch up otherwise).
		require.NoError(t, rdb.HIncrBy(ctx, hk, stored.FieldSeq, 1).Err())
		res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
		require.NoError(t, err)
		require.Len(t, res.Refused, 1)
		assert.Contains(t, res.Refused[0], "ahead")
		all, err := r.led.Holders(ctx)
		require.NoError(t, err)
		res, err = Rebuild(ctx, r.eng, r.led, all, true)
		require.NoError(t, err)
		assert.Equal(t, 1, res.Rebuilt)
		assert.Empty(t, res.Refused)
		after, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})
}

// holderKeys lists every key of holder, its idempotency records included,
// from every master.
func holderKeys(t *testing.T, rdb *redis.ClusterClient, holder string) []string {
	t.Helper()
	var mu sync.Mutex
	var keys []string
	require.NoError(t, rdb.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		// The holder's hash and its idempotency records.
		it := m.Scan(ctx, 0, cluster.Holder(holder)+"*", 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	}))
	return keys
}

func TestRebuild_RestoresIdempotencyRecords(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	h := "idem-" + time.Now().Format("150405.000000")
	pay := instructions.New("pay-1", h).Debit("CNY", "30.00").SpendPoints("100")
	ins := []instructions.Instruction{
		instructions.New("open", h).Open().Credit("CNY", "100.00").EarnPoints("500"),
		pay,
		instructions.New("hold-1", h).Freeze("CNY", "20.00", "order-1", time.Hour),
	}
	var answers []instructions.Result
	for _, in := range ins {
		res, err := r.eng.Apply(ctx, in)
		require.NoError(t, err)
		answers = append(answers, res)
	}
	tooMuch := instructions.New("pay-2", h).Debit("CNY", "1000.00")
	_, err := r.eng.Apply(ctx, tooMuch)
	require.ErrorIs(t, err, engine.ErrInsufficientFunds)
	rep := r.waitInSync(t)
	require.False(t, rep.Drift, "%+v", rep)
	before, err := r.eng.State(ctx, h)
	require.NoError(t, err)

	// Redis loses the holder: state, expiry index entry, idempotency records.
	rdb := r.c.Client(nil)
	defer rdb.Close()
	keys := holderKeys(t, rdb, h)
	require.Contains(t, keys, cluster.Tx(h, "pay-1"))
	for _, k := range keys {
		require.NoError(t, rdb.Del(ctx, k).Err())
	}
	require.NoError(t, rdb.ZRem(ctx, cluster.Expiry(cluster.HolderSlot(h)), h+" order-1").Err())
	require.Empty(t, holderKeys(t, rdb, h))

	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	assert.Equal(t, RebuildResult{Rebuilt: 1}, res)
	for _, in := range ins {
		ttl, err := rdb.PTTL(ctx, cluster.Tx(h, in.ID)).Result()
		require.NoError(t, err)
		assert.InDelta(t, float64(engine.DefaultIdempotencyTTL), float64(ttl), float64(time.Minute), "record of %s", in.ID)
	}

	t.Run("a retried instruction is replayed with its first answer", func(t *testing.T) {
		res, err := r.eng.Apply(ctx, pay)
		require.NoError(t, err)
		assert.True(t, res.Replayed)
		res.Replayed = false
		assert.Equal(t, answers[1], res, "same seq, same result")
		after, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, before, after, "nothing applied twice")
	})
	t.Run("the same id with another body is a conflict", func(t *testing.T) {
		_, err := r.eng.Apply(ctx, instructions.New("pay-1", h).Debit("CNY", "1.00"))
		require.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	})
	t.Run("a rejection is not in the ledger: retried, it is judged afresh", func(t *testing.T) {
		_, err := r.eng.Apply(ctx, tooMuch)
		require.ErrorIs(t, err, engine.ErrInsufficientFunds)
		var e *engine.Error
		require.ErrorAs(t, err, &e)
		assert.False(t, e.Replayed)
	})
	rep = r.run(t)
	assert.False(t, rep.Drift, "clean again: %+v", rep)
}

func TestRebuild_RefusesDivergedHolder(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	h := "fork-" + time.Now().Format("150405.000000")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00"))
	require.NoError(t, err)
	snaps, err := r.eng.Snapshots(ctx, []string{h})
	require.NoError(t, err)
	beforeX := snaps[h]
	_, err = r.eng.Apply(ctx, instructions.New("x", h).Debit("CNY", "10.00"))
	require.NoError(t, err)
	_, err = r.eng.Apply(ctx, instructions.New("x2", h).Debit("CNY", "5.00"))
	require.NoError(t, err)
	require.False(t, r.waitInSync(t).Drift)

	// What a failover does when the relay delivered x and x2 before the
	// replica had them: Redis is back before x, their idempotency records
	// gone too; then it takes y at x's seq, which the ledger refuses. Redis
	// is behind the ledger, but a rebuild would throw y away.
	_, err = r.eng.Restore(ctx, beforeX, true)
	require.NoError(t, err)
	require.NoError(t, r.rdb.Del(ctx, cluster.Tx(h, "x"), cluster.Tx(h, "x2")).Err())
	_, err = r.eng.Apply(ctx, instructions.New("y", h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := r.led.RefusedCount(ctx)
		return err == nil && n[h] > 0
	}, 2*time.Minute, 50*time.Millisecond, "the ledger refuses y")
	withY, err := r.eng.State(ctx, h)
	require.NoError(t, err)

	rep := r.run(t)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, KindDiverged, rep.Findings[0].Kind, "%+v", rep.Findings[0])
	assert.Zero(t, rep.EventsInFlight, "y will never reach the ledger")
	assert.True(t, rep.Drift)

	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	require.Len(t, res.Refused, 1)
	assert.Contains(t, res.Refused[0], "refused")
	assert.Zero(t, res.Rebuilt)
	after, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, withY, after, "y, acknowledged, is still there")

	res, err = Rebuild(ctx, r.eng, r.led, []string{h}, true)
	require.NoError(t, err)
	assert.Equal(t, RebuildResult{Rebuilt: 1}, res)
	after, err = r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, "85.00", after.Balances["CNY"].Available, "the ledger's history: x and x2, not y")
}

// TestRebuild_RepairsTamperedFigures changes one balance field in Redis,
// its seq and digest untouched: reconcile calls it a mismatch, rebuild
// refuses it (never "in sync"), and rebuild --force writes the ledger's
// figures, after which reconcile is clean.
func TestRebuild_RepairsTamperedFigures(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	h := "tamper-" + time.Now().Format("150405.000000")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00").Freeze("CNY", "10.00", "order-1", time.Hour))
	require.NoError(t, err)
	require.False(t, r.waitInSync(t).Drift)
	before, err := r.eng.State(ctx, h)
	require.NoError(t, err)

	require.NoError(t, r.rdb.HSet(ctx, cluster.Holder(h), stored.PrefixBalance+"CNY", "999900").Err())
	tampered, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	require.Equal(t, "9999.00", tampered.Balances["CNY"].Available)

	rep := r.run(t)
	assert.True(t, rep.Drift)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, KindMismatch, rep.Findings[0].Kind)
	assert.Equal(t, []string{"balance CNY [available frozen]: redis [999900 1000], ledger [9000 1000]"}, rep.Findings[0].Difference)

	res, err := Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	assert.Zero(t, res.Rebuilt, "never in sync")
	assert.Zero(t, res.InSync, "never in sync")
	require.Len(t, res.Refused, 1)
	assert.Contains(t, res.Refused[0], "balance CNY")
	after, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, tampered, after, "without --force nothing is written")

	res, err = Rebuild(ctx, r.eng, r.led, []string{h}, true)
	require.NoError(t, err)
	assert.Equal(t, RebuildResult{Rebuilt: 1}, res)
	after, err = r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the ledger's figures")

	rep = r.run(t)
	assert.False(t, rep.Drift, "clean again: %+v", rep)
	res, err = Rebuild(ctx, r.eng, r.led, []string{h}, false)
	require.NoError(t, err)
	assert.Equal(t, RebuildResult{InSync: 1}, res)
}

// kinds lists the kinds of a report's findings.
func kinds(rep *Report) []string {
	var out []string
	for _, fd := range rep.Findings {
		out = append(out, fd.Kind)
	}
	return out
}
