package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/outbox"
)

// format1Suffixes are the six hashes a holder had in key format 1.
var format1Suffixes = []string{":meta", ":balance", ":frozen", ":points", ":coupons", ":holds"}

// TestUpgrade_FromKeyFormat1ByRebuild follows docs/upgrade.md from a Redis
// that holds key format 1: the writers' history relayed into the ledger
// (steps 1 and 2), each holder's state in the six hashes of format 1 and no
// hash of format 2, then the rebuild of the new version (step 4), reconcile
// clean, every holder's state what it was, the writers of the new version
// going on where the history stopped (step 5: seq, digest chain, replayed
// ids), and the format 1 hashes deleted as the document says. Step 3,
// reconcile with the old version, needs the old code, which this tree no
// longer has.
func TestUpgrade_FromKeyFormat1ByRebuild(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()

	// Steps 1 and 2: a history written, then relayed to the last event.
	var holders []string
	var ins []instructions.Instruction
	for i := range 8 {
		h := fmt.Sprintf("up%d-%s", i, strconv.FormatInt(time.Now().UnixNano(), 36))
		holders = append(holders, h)
		ins = append(ins,
			instructions.New("open", h).Open().Credit("CNY", "100.00").EarnPoints("500").GrantCoupon("c-1", time.Time{}),
			instructions.New("order", h).Freeze("CNY", "30.00", "ord-1", time.Hour).FreezePoints("200", "ord-1").LockCoupon("c-1", "ord-1"),
			instructions.New("fill", h).SettleLeg("ord-1", "CNY", "10.00"),
			instructions.New("spend", h).Debit("CNY", "1.50"))
	}
	r.applyAll(t, ins)
	relayCtx, stopRelay := context.WithCancel(ctx)
	relay := outbox.NewRelay(r.c.Client(nil), r.led, &outbox.Options{DiscoverInterval: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	relayDone := make(chan struct{})
	go func() { _ = relay.Run(relayCtx); close(relayDone) }()
	rep := r.waitInSync(t)
	require.Zero(t, rep.EventsInFlight)
	require.False(t, rep.Drift, "%+v", rep.Findings)
	stopRelay()
	<-relayDone

	before := map[string]instructions.State{}
	for _, h := range holders {
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		before[h] = st
	}

	// Redis as format 1 left it: the six hashes, no hash of format 2.
	for _, h := range holders {
		f2, err := r.rdb.HGetAll(ctx, cluster.Holder(h)).Result()
		require.NoError(t, err)
		f1 := map[string]map[string]any{":meta": {}, ":balance": {}, ":frozen": {}, ":points": {}, ":coupons": {}, ":holds": {}}
		for k, v := range f2 {
			switch {
			case k == "status" || k == "seq" || k == "digest" || k == "created_ms":
				f1[":meta"][k] = v
			case strings.HasPrefix(k, "b:"):
				f1[":balance"][k[2:]] = v
			case strings.HasPrefix(k, "f:"):
				f1[":frozen"][k[2:]] = v
			case k == "p:a":
				f1[":points"]["available"] = v
			case k == "p:f":
				f1[":points"]["frozen"] = v
			case strings.HasPrefix(k, "c:"):
				f1[":coupons"][k[2:]] = v
			case strings.HasPrefix(k, "h:"):
				f1[":holds"][k[2:]] = v
			default:
				t.Fatalf("holder %s: field %q of format 2 has no place in format 1", h, k)
			}
		}
		_, err = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, cluster.Holder(h))
			for suffix, fields := range f1 {
				if len(fields) > 0 {
					p.HSet(ctx, cluster.Holder(h)+suffix, fields)
				}
			}
			return nil
		})
		require.NoError(t, err)
		_, err = r.eng.State(ctx, h)
		require.ErrorIs(t, err, engine.ErrHolderNotFound, "the new version does not read format 1")
	}

	// Step 4: rebuild every holder of the ledger with the new version, then
	// reconcile: clean, and every state as it was.
	all, err := r.led.Holders(ctx)
	require.NoError(t, err)
	res, err := Rebuild(ctx, r.eng, r.led, all, false)
	require.NoError(t, err)
	assert.Equal(t, len(holders), res.Rebuilt, "refused: %v, missing: %v", res.Refused, res.Missing)
	rep = r.run(t)
	assert.False(t, rep.Drift, "%+v", rep.Findings)
	assert.Equal(t, len(holders), rep.InSync)
	for _, h := range holders {
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, before[h], st, "holder %s after the rebuild", h)
	}

	// Step 5: the writers of the new version go on where the history stopped.
	r.startRelay(t)
	for _, h := range holders {
		res, err := r.eng.Apply(ctx, instructions.New("fill", h).SettleLeg("ord-1", "CNY", "10.00"))
		require.NoError(t, err, "a replay of an id of the history")
		assert.True(t, res.Replayed)
		res, err = r.eng.Apply(ctx, instructions.New("after", h).Credit("CNY", "1.00").Release("ord-1"))
		require.NoError(t, err)
		assert.Equal(t, before[h].Seq+1, res.Seq)
	}
	rep = r.waitInSync(t)
	assert.Zero(t, rep.EventsInFlight)
	assert.False(t, rep.Drift, "the digest chain goes on in the ledger: %+v", rep.Findings)

	// The format 1 hashes deleted as the document says: nothing changes.
	for _, addr := range r.c.MasterAddrs() {
		node := redis.NewClient(&redis.Options{Addr: addr})
		for _, suffix := range format1Suffixes {
			keys, err := node.Keys(ctx, "{h:*}"+suffix).Result()
			require.NoError(t, err)
			for _, k := range keys {
				require.NoError(t, node.Unlink(ctx, k).Err())
			}
		}
		_ = node.Close()
	}
	for _, h := range holders {
		for _, suffix := range format1Suffixes {
			n, err := r.rdb.Exists(ctx, cluster.Holder(h)+suffix).Result()
			require.NoError(t, err)
			assert.Zero(t, n)
		}
	}
	rep = r.run(t)
	assert.False(t, rep.Drift, "%+v", rep.Findings)
	assert.Equal(t, len(holders), rep.InSync)
}
