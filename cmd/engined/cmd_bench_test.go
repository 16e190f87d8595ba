package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/internal/bench"
)

// TestBench_TransferPartReportsItsLineAndKeepsTheOthers runs the transfer
// part alone, quick, on the package's cluster: the JSON keeps every part's
// object and gains "transfer" with its figures; the table has its line.
func TestBench_TransferPartReportsItsLineAndKeepsTheOthers(t *testing.T) {
	needRedis(t)
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--quick", "--parts", "transfer", "--transfer-duration", "300ms", "--load-rounds", "1", "--json",
		"--redis", strings.Join(testCluster.Addrs(), ",")},
		cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	require.Equal(t, exitOK, code, errb.String())

	var rep map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	for _, k := range []string{"script_cost", "pipeline", "concurrent", "http", "contention", "memory", "relay", "transfer", "machine", "targets"} {
		assert.Contains(t, rep, k)
	}
	var tr map[string]any
	require.NoError(t, json.Unmarshal(rep["transfer"], &tr))
	for _, k := range []string{"per_sec", "single_per_sec", "ratio", "p50_ms", "p99_ms", "aborted"} {
		assert.Contains(t, tr, k)
	}
	assert.Equal(t, 0.0, tr["aborted"])
	assert.NotContains(t, tr, "skipped")
	assert.Contains(t, errb.String(), "two-part trades/s")
}

// TestBench_SystemPartQuick runs the system part with short phases: its
// own cluster with AOF, a PostgreSQL and this binary's serve. It checks what
// the part counts (every phase applied operations without an error, the
// relay delivered their events, the money is exact), never how fast.
func TestBench_SystemPartQuick(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := bench.Quick()
	s.SystemDuration = time.Second
	rep, err := bench.Run(ctx, bench.Options{Settings: s, Parts: []string{"system"}, Redis: testCluster.Addrs(),
		Daemon: []string{buildEngined(t)}})
	require.NoError(t, err)
	sys := rep.System
	require.Empty(t, sys.Skipped)
	var names []string
	for _, p := range sys.Phases {
		names = append(names, p.Name)
		assert.Positive(t, p.Ops, p.Name)
		assert.Zero(t, p.Errors, "%s: %s", p.Name, p.FirstError)
		assert.True(t, p.MoneyExact, p.Name)
		assert.Zero(t, p.HalfLoad.Errors, "%s at half load: %s", p.Name, p.HalfLoad.FirstError)
		assert.Positive(t, p.HalfLoad.Achieved, p.Name)
		assert.Positive(t, p.HalfLoad.CPUPer1000.Daemon, p.Name)
		assert.Positive(t, p.HalfLoad.Cores.All, p.Name)
		assert.Positive(t, p.CPUPer1000.Daemon, p.Name)
		assert.Positive(t, p.CPUPer1000.Redis, p.Name)
		assert.Positive(t, p.RedisUsecPer1000["fcall"], p.Name)
		if p.Name == "floor" {
			assert.Zero(t, p.EventsPerOp, "the floor writes no event")
			continue
		}
		assert.GreaterOrEqual(t, p.EventsPerOp, 1.0, "%s: every operation's events are relayed", p.Name)
		assert.Positive(t, p.PGBytesPerOp, p.Name)
	}
	assert.Equal(t, []string{"debit", "p2p", "hold_settle", "checkout", "floor"}, names)
	assert.True(t, sys.Money.Exact, "%+v", sys.Money)
	assert.Zero(t, sys.Money.Uncertain)
	assert.Equal(t, s.SystemHolders, sys.Money.Holders)
	assert.Contains(t, sys.Ratios.ToFloor, "debit")
}

// TestBench_HotPartQuick runs the hot part, tiny, with this binary's serve
// for its http path: every path pays in its three phases without an error,
// the money of each is exact (the http path's transfers debited the payers
// what the merchant, its lanes summed, and the payees received), and the
// table has the part's lines.
func TestBench_HotPartQuick(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := bench.Quick()
	s.HotDur, s.HotPayers = 200*time.Millisecond, 50
	rep, err := bench.Run(ctx, bench.Options{Settings: s, Parts: []string{"hot"}, Redis: testCluster.Addrs(),
		Daemon: []string{buildEngined(t)}})
	require.NoError(t, err)
	h := rep.Hot
	require.Empty(t, h.Skipped)
	for name, p := range map[string]bench.HotPath{"apply_batch": h.ApplyBatch, "transfer": h.Transfer, "http": h.HTTP} {
		require.Empty(t, p.Skipped, name)
		for phase, x := range map[string]bench.HotPhase{"plain": p.Plain, "hot": p.Hot, "spread": p.Spread} {
			assert.Positive(t, x.Payments, "%s %s", name, phase)
			assert.Zero(t, x.Errors, "%s %s: %s", name, phase, x.FirstError)
			assert.Equal(t, x.PaidUnits, x.ReceivedUnits, "%s %s", name, phase)
			assert.Len(t, x.MastersCPUShare, h.Masters, "%s %s", name, phase)
		}
		assert.True(t, p.Money.Exact, "%s: %+v", name, p.Money)
	}
	assert.Equal(t, h.HTTP.Money.PaidUnits, h.HTTP.Money.DebitedUnits)
	assert.Equal(t, 3*s.HotRounds, h.Sweep.Sweeps)
	assert.Zero(t, h.Sweep.Errors)

	var out bytes.Buffer
	bench.WriteTables(&out, rep)
	assert.Contains(t, out.String(), "http: payments to one merchant, hot of")
	assert.Contains(t, out.String(), "hot.http.hot_over_spread")
}
