package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// TestReconcileAdversary_HoldersAtTheLimitsThroughTheCommands drives
// `engined reconcile` and `engined rebuild` (no relay runs: the test hands
// the events over itself) over a suspended holder at the limits (a
// 64-character id, 49 holds and 60 coupons of 64-character ids, 2^53-1
// points), a holder Redis alone has and one the ledger alone has, and checks
// every answer and exit status against docs/ledger.md, each holder's whole
// state where a command must write it back or must change nothing.
func TestReconcileAdversary_HoldersAtTheLimitsThroughTheCommands(t *testing.T) {
	needRedis(t)
	r := newLedgerRigOn(t, clustertest.StartForTest(t, clustertest.Options{Masters: 1}))
	ctx := context.Background()
	tag := time.Now().Format("150405.000000")
	long := func(prefix string, i int) string {
		s := fmt.Sprintf("%s-%d-%s-", prefix, i, tag)
		return s + strings.Repeat("z", 64-len(s))
	}
	big, onlyRedis, onlyLedger := long("big", 0), "redis-only-"+tag, "ledger-only-"+tag
	apply := func(in instructions.Instruction) {
		t.Helper()
		_, err := r.eng.Apply(ctx, in)
		require.NoError(t, err)
	}
	apply(instructions.New(long("id", 0), big).Open().Credit("CNY", "1000.00").EarnPoints("9007199254740991"))
	for n := range 2 {
		in := instructions.New(long("freeze", n), big)
		for i := range 24 {
			in = in.Freeze("CNY", "1.00", long("hold", n*24+i), time.Hour)
		}
		apply(in)
	}
	in := instructions.New(long("coupons", 0), big)
	for i := range 60 {
		in = in.GrantCoupon(long("c", i), time.Time{})
	}
	apply(in)
	apply(instructions.New(long("lock", 0), big).LockCoupon(long("c", 0), long("hold", 48)))
	apply(instructions.New(long("suspend", 0), big).Suspend())
	apply(instructions.New("open", onlyLedger).Open().Credit("USDT", "5"))
	apply(instructions.New("open", onlyRedis).Open().Credit("USDT", "5"))

	outbox := func(h string) string { return cluster.Outbox(cluster.HolderSlot(h)) }
	// What the relay does: write to the ledger, then delete from the outbox.
	deliver := func(h string) {
		t.Helper()
		msgs, err := r.rdb.XRange(ctx, outbox(h), "-", "+").Result()
		require.NoError(t, err)
		var evs []map[string]string
		for _, m := range msgs {
			if m.Values["holder"] != h {
				continue
			}
			f := map[string]string{}
			for k, v := range m.Values {
				f[k] = v.(string)
			}
			evs = append(evs, f)
			require.NoError(t, r.rdb.XDel(ctx, outbox(h), m.ID).Err())
		}
		require.NoError(t, r.led.Write(ctx, stored.Entries(evs...)))
	}
	deliver(big)
	deliver(onlyLedger)
	state := func(h string) instructions.State {
		t.Helper()
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		return st
	}
	bigState, ledgerOnlyState := state(big), state(onlyLedger)
	require.Equal(t, "suspended", bigState.Status)
	require.Len(t, bigState.Holds, 49)
	require.Len(t, bigState.Coupons, 60)
	expiry := r.rdb.ZRangeWithScores(ctx, cluster.Expiry(cluster.HolderSlot(big)), 0, -1).Val()

	code, stdout, stderr := r.run("reconcile")
	assert.Equal(t, exitOK, code, "a holder Redis alone has, its events in the outbox, is in flight:\n%s%s", stdout, stderr)
	assert.Regexp(t, `redis ahead \(events in flight\)\s*\|\s*1 \(1 events\)`, stdout)

	t.Run("a holder only the ledger has is missing in Redis, then rebuilt exactly", func(t *testing.T) {
		require.NoError(t, r.rdb.Del(ctx, cluster.Holder(onlyLedger), cluster.Tx(onlyLedger, "open")).Err())
		code, stdout, _ := r.run("reconcile")
		assert.Equal(t, exitDrift, code)
		assert.Regexp(t, `missing in redis\s*\|\s*1\s*\|\s*yes`, stdout)
		code, stdout, stderr := r.run("rebuild", "--holder", onlyLedger)
		require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
		assert.Contains(t, stdout, "rebuilt 1, in sync 0, refused 0, not in the ledger 0")
		assert.Equal(t, ledgerOnlyState, state(onlyLedger))
	})

	t.Run("a holder only Redis has is not in the ledger, and stays as it is", func(t *testing.T) {
		before := state(onlyRedis)
		code, stdout, stderr := r.run("rebuild", "--holder", onlyRedis)
		assert.Equal(t, exitDrift, code)
		assert.Contains(t, stdout, "not in the ledger 1")
		assert.Contains(t, stderr, onlyRedis+": not in the ledger")
		assert.Equal(t, before, state(onlyRedis))
	})

	t.Run("rebuild --all leaves the holders in sync as they are", func(t *testing.T) {
		code, stdout, stderr := r.run("rebuild", "--all")
		require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
		assert.Contains(t, stdout, "rebuilt 0, in sync 2, refused 0, not in the ledger 0")
	})

	t.Run("a hold deleted by hand is refused, then repaired by --force", func(t *testing.T) {
		require.NoError(t, r.rdb.HDel(ctx, cluster.Holder(big), stored.PrefixHold+long("hold", 47)).Err())
		require.NoError(t, r.rdb.ZRem(ctx, cluster.Expiry(cluster.HolderSlot(big)), big+" "+long("hold", 47)).Err())
		tampered := state(big)
		code, stdout, stderr := r.run("rebuild", "--all")
		assert.Equal(t, exitDrift, code)
		assert.Contains(t, stdout, "rebuilt 0, in sync 1, refused 1")
		assert.Contains(t, stderr, "hold "+long("hold", 47))
		assert.Equal(t, tampered, state(big), "nothing written")
		code, stdout, stderr = r.run("rebuild", "--holder", big, "--force")
		require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
		assert.Equal(t, bigState, state(big))
		assert.ElementsMatch(t, expiry, r.rdb.ZRangeWithScores(ctx, cluster.Expiry(cluster.HolderSlot(big)), 0, -1).Val())
	})

	t.Run("--force refuses a holder whose events are on their way", func(t *testing.T) {
		apply(instructions.New(long("resume", 0), big).Resume())
		resumed := state(big)
		code, stdout, stderr := r.run("rebuild", "--holder", big, "--force")
		assert.Equal(t, exitDrift, code)
		assert.Contains(t, stdout, "refused 1")
		assert.Contains(t, stderr, "on their way")
		assert.NotContains(t, stderr, "--force overwrites", "not for events on their way")
		assert.Equal(t, resumed, state(big), "nothing written")
		deliver(big)
		deliver(onlyRedis)
		code, stdout, stderr = r.run("reconcile")
		assert.Equal(t, exitOK, code, "%s%s", stdout, stderr)
	})

	t.Run("what cannot run exits 2", func(t *testing.T) {
		code, _, _ := r.run("rebuild", "--holder", big, "--all")
		assert.Equal(t, exitUsage, code)
		code, _, _ = r.run("rebuild")
		assert.Equal(t, exitUsage, code)
		r.env["ENGINED_PG_DSN"] = "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"
		defer func() { r.env["ENGINED_PG_DSN"] = r.dsn }()
		code, _, stderr := r.run("reconcile")
		assert.Equal(t, exitUsage, code, stderr)
		code, _, stderr = r.run("rebuild", "--all")
		assert.Equal(t, exitUsage, code, stderr)
	})
}
