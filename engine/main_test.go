package engine_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// One real 3-master, 3-replica cluster for the package's tests.
var (
	testCluster *clustertest.Cluster
	rdb         *redis.ClusterClient
	eng         *engine.Engine
)

func TestMain(m *testing.M) {
	flag.Parse()
	if steps := os.Getenv(envDriverSteps); steps != "" {
		os.Exit(runDriverThenDie(steps)) // a child of TestTransfer_RecoveryAfterTheDriverIsKilled
	}
	if testing.Short() {
		// The examples run against the cluster too: leave them out, as the
		// tests that need Redis skip themselves.
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			_ = f.Value.Set("^(Test|Fuzz)")
		}
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := clustertest.StartForMain(ctx, clustertest.Options{Masters: 3, Replicas: 1})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start redis cluster:", err)
		os.Exit(1)
	}
	testCluster = c
	// Generous timeouts: the whole suite shares two cores with its servers.
	rdb = c.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	eng = engine.New(rdb, nil)
	code := m.Run()
	_ = rdb.Close()
	_ = c.Stop()
	os.Exit(code)
}

// needRedis skips under -short; otherwise the cluster of TestMain is there.
func needRedis(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis")
	}
}

func newID(prefix string) string { return clustertest.NewID(prefix) }

// newHolder opens a fresh holder, applies setup ops to it in one instruction
// (if any), and checks the holder's invariants when the test ends.
func newHolder(t *testing.T, setup func(instructions.Instruction) instructions.Instruction) string {
	t.Helper()
	h := newID("h")
	in := instructions.New(newID("open"), h).Open()
	if setup != nil {
		in = setup(in)
	}
	_, err := eng.Apply(context.Background(), in)
	require.NoError(t, err)
	t.Cleanup(func() { checkInvariants(t, h) })
	return h
}

// rawState is everything Redis holds for a holder but its idempotency
// records: its hash, its outbox events and its expiry index entries. Hashes
// splits the hash by kind of field ("meta", "balance", "frozen", "points"
// with available and frozen, "coupons", "holds"), so that checks read it
// by account.
type rawState struct {
	Hashes map[string]map[string]string
	Events []map[string]any
	Expiry map[string]float64
}

// The parts of rawState.Hashes.
const (
	hMeta    = "meta"
	hBalance = "balance"
	hFrozen  = "frozen"
	hPoints  = "points"
	hCoupons = "coupons"
	hHolds   = "holds"
)

// splitHolderHash sorts the fields of a holder hash by kind.
func splitHolderHash(m map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{hMeta: {}, hBalance: {}, hFrozen: {}, hPoints: {}, hCoupons: {}, hHolds: {}}
	for f, v := range m {
		switch {
		case strings.HasPrefix(f, stored.PrefixBalance):
			out[hBalance][f[2:]] = v
		case strings.HasPrefix(f, stored.PrefixFrozen):
			out[hFrozen][f[2:]] = v
		case f == stored.FieldPointsAvailable:
			out[hPoints]["available"] = v
		case f == stored.FieldPointsFrozen:
			out[hPoints]["frozen"] = v
		case strings.HasPrefix(f, stored.PrefixCoupon):
			out[hCoupons][f[2:]] = v
		case strings.HasPrefix(f, stored.PrefixHold):
			out[hHolds][f[2:]] = v
		default:
			out[hMeta][f] = v
		}
	}
	return out
}

func readRaw(t *testing.T, holder string) rawState {
	t.Helper()
	ctx := context.Background()
	m, err := rdb.HGetAll(ctx, cluster.Holder(holder)).Result()
	require.NoError(t, err)
	st := rawState{Hashes: splitHolderHash(m), Expiry: map[string]float64{}}
	slot := cluster.HolderSlot(holder)
	msgs, err := rdb.XRange(ctx, cluster.Outbox(slot), "-", "+").Result()
	require.NoError(t, err)
	for _, msg := range msgs {
		if msg.Values["holder"] == holder {
			st.Events = append(st.Events, msg.Values)
		}
	}
	zs, err := rdb.ZRangeWithScores(ctx, cluster.Expiry(slot), 0, -1).Result()
	require.NoError(t, err)
	for _, z := range zs {
		if m := z.Member.(string); strings.HasPrefix(m, holder+" ") {
			st.Expiry[m] = z.Score
		}
	}
	return st
}

// checkInvariants: no negative value, frozen equals the sum of open holds'
// legs, coupons and holds agree, seq equals the number of events and the
// events are numbered 1..seq, every expiring hold is in the expiry index.
func checkInvariants(t *testing.T, holder string) {
	t.Helper()
	st := readRaw(t, holder)
	meta := st.Hashes[hMeta]
	if meta["status"] == "" {
		// Nothing is ever written for a holder that does not exist: no key
		// of its hash tag (hashes, idempotency records), no event, no
		// expiry index entry.
		assert.Empty(t, keysOfHolder(t, holder), "keys of a holder that does not exist")
		assert.Empty(t, st.Events, "events of a holder that does not exist")
		assert.Empty(t, st.Expiry, "expiry index entries of a holder that does not exist")
		return
	}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		assert.NoError(t, err, "value %q", s)
		assert.GreaterOrEqual(t, n, int64(0), "negative value")
		assert.LessOrEqual(t, n, int64(instructions.MaxUnits), "value above 2^53-1")
		return n
	}
	for _, k := range []string{hBalance, hFrozen, hPoints} {
		for _, v := range st.Hashes[k] {
			num(v)
		}
	}
	legs := map[string]int64{}
	heldCoupons := map[string]string{}
	for name, raw := range st.Hashes[hHolds] {
		// "<exp>|<legs>|<coupons>", then "|<takes>" while trades that took
		// from it are undecided: only those keep an empty hold open.
		parts := strings.SplitN(raw, "|", 4)
		require.GreaterOrEqual(t, len(parts), 3, "hold %s: %q", name, raw)
		counted := len(parts) == 4
		if counted {
			assert.Positive(t, num(parts[3]), "hold %s: a count of takes", name)
		}
		empty := true
		for _, leg := range strings.Split(parts[1], ",") {
			if a, u, ok := strings.Cut(leg, "="); ok {
				n := num(u)
				assert.Positive(t, n, "hold %s leg %s", name, a)
				legs[a] += n
				empty = false
			}
		}
		if parts[2] != "" {
			for _, c := range strings.Split(parts[2], ",") {
				heldCoupons[c] = name
				empty = false
			}
		}
		assert.False(t, empty && !counted, "hold %s is open with nothing in it", name)
		if exp := num(parts[0]); exp > 0 {
			assert.Equal(t, float64(exp), st.Expiry[holder+" "+name], "hold %s missing from the expiry index", name)
		}
	}
	for a, v := range st.Hashes[hFrozen] {
		assert.Equal(t, legs[a], num(v), "frozen %s vs the sum of open holds", a)
	}
	for a, n := range legs {
		if a == instructions.PointsLeg {
			assert.Equal(t, n, num(orZero(st.Hashes[hPoints]["frozen"])), "frozen points vs holds")
		} else {
			assert.Equal(t, n, num(orZero(st.Hashes[hFrozen][a])), "frozen %s vs holds", a)
		}
	}
	if legs[instructions.PointsLeg] == 0 {
		assert.Equal(t, int64(0), num(orZero(st.Hashes[hPoints]["frozen"])), "frozen points without a hold")
	}
	for c, raw := range st.Hashes[hCoupons] {
		state, _, _ := strings.Cut(raw, "|")
		if h, ok := strings.CutPrefix(state, instructions.CouponHeldBy); ok {
			assert.Equal(t, h, heldCoupons[c], "coupon %s says held by %s", c, h)
		}
	}
	for c, h := range heldCoupons {
		state, _, _ := strings.Cut(st.Hashes[hCoupons][c], "|")
		assert.Equal(t, instructions.CouponHeldBy+h, state, "hold %s holds coupon %s", h, c)
	}
	seq := num(meta["seq"])
	require.Len(t, st.Events, int(seq), "one outbox event per applied instruction")
	seqs := make([]int, len(st.Events))
	for i, ev := range st.Events {
		seqs[i], _ = strconv.Atoi(ev["seq"].(string))
	}
	sort.Ints(seqs)
	for i, s := range seqs {
		assert.Equal(t, i+1, s, "event seqs are 1..seq")
	}
	for m := range st.Expiry {
		_, ok := st.Hashes[hHolds][strings.TrimPrefix(m, holder+" ")]
		assert.True(t, ok, "expiry index entry %q without an open hold", m)
	}
}

// keysOfHolder lists every key with the holder's hash tag in the package's
// cluster: whatever the script or the engine wrote for it.
func keysOfHolder(t *testing.T, holder string) []string {
	t.Helper()
	return keysOn(t, rdb, holder)
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// applyErr applies and returns the *Error it must fail with.
func applyErr(t *testing.T, in instructions.Instruction) *engine.Error {
	t.Helper()
	_, err := eng.Apply(context.Background(), in)
	require.Error(t, err)
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	return e
}

func state(t *testing.T, holder string) instructions.State {
	t.Helper()
	st, err := eng.State(context.Background(), holder)
	require.NoError(t, err)
	return st
}

type redisClient = redis.Client

// processID asks the server at addr for its process id.
func processID(t *testing.T, addr string) int {
	t.Helper()
	return clustertest.ProcessID(t, addr)
}
