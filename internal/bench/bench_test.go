package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared.c != nil {
		_ = shared.rdb.Close()
		_ = shared.c.Stop()
	}
	os.Exit(code)
}

func TestParseCommandStats_ReadsCallsAndUsec(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_evalsha:calls=2000,usec=187000,usec_per_call=93.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_config|resetstat:calls=1,usec=12,usec_per_call=12.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hget:calls=12000,usec=3800,usec_per_call=0.32,rejected_calls=0,failed_calls=0\r\n"
	got := parseCommandStats(info)
	assert.Equal(t, map[string]cmdStat{
		"evalsha":          {Calls: 2000, Usec: 187000},
		"config|resetstat": {Calls: 1, Usec: 12},
		"hget":             {Calls: 12000, Usec: 3800},
	}, got)
}

func TestCommandsPerCall_KeepsTheScriptsCommands(t *testing.T) {
	got := commandsPerCall(map[string]cmdStat{
		"fcall": {Calls: 100, Usec: 9000},
		"hget":  {Calls: 600, Usec: 300},
		"info":  {Calls: 1, Usec: 50},
	}, 100)
	assert.Equal(t, map[string]CommandCost{"HGET": {Calls: 6, Usec: 3}}, got)
}

func TestMedianAndPercentile(t *testing.T) {
	assert.Equal(t, 0.0, median(nil))
	assert.Equal(t, 3.0, median([]float64{5, 1, 3}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	sorted := make([]float64, 100)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	assert.Equal(t, 50.0, percentile(sorted, 50))
	assert.Equal(t, 99.0, percentile(sorted, 99))
	assert.Equal(t, 100.0, percentile(sorted, 100))
}

func TestVariantSource_EachCutStopsAtOneStageMark(t *testing.T) {
	cuts, err := cutsOf(lua.Library.Source)
	require.NoError(t, err)
	require.Greater(t, len(cuts), 2, "the library marks its parts")
	assert.Equal(t, strings.Count(lua.Library.Source, "\n"+stageMark)+1, len(cuts))
	names := map[string]bool{}
	for i, c := range cuts {
		t.Run(c.name, func(t *testing.T) {
			assert.False(t, names[c.name], "each part named once")
			names[c.name] = true
			src, err := variantSource(lua.Library.Source, c, "cut")
			require.NoError(t, err)
			if i == len(cuts)-1 {
				assert.Equal(t, lua.Library.Source, src, "the last is the whole function")
				return
			}
			assert.True(t, strings.HasPrefix(src, "#!lua name=cut\n"), "a library of its own")
			assert.Equal(t, 1, strings.Count(src, stopEarly))
			assert.Contains(t, src, stopEarly+stageMark, "it stops just before a mark")
			assert.Contains(t, src, "redis.register_function('cut', apply)")
			assert.NotContains(t, src, "register_function('"+lua.FuncTransfer+"'")
			assert.NotContains(t, src, "register_function('"+lua.FuncApplyJSON+"'", "function names are global: two libraries cannot both register it")
		})
	}
	_, err = cutsOf("#!lua name=x\nlocal function apply() end\n")
	assert.Error(t, err, "a library without marks has no breakdown")
}

func TestTargets_NameEveryGoal(t *testing.T) {
	rep := &Report{}
	rep.ScriptCost.Ratio = 2.5
	rep.HTTP.Skipped = "no daemon"
	ts := targets(rep)
	require.NotEmpty(t, ts)
	byName := map[string]Target{}
	for _, tg := range ts {
		byName[tg.Name] = tg
	}
	assert.True(t, byName["script_cost.ratio"].Met)
	assert.True(t, byName["http.ratio_to_library"].Skip)
	assert.False(t, byName["memory.bytes_per_holder"].Met, "no figure is no pass")
}

// TestBench_QuickKeepsAGivenTransferDuration: a flag given over --quick
// wins; the rest stays Quick's.
func TestBench_QuickKeepsAGivenTransferDuration(t *testing.T) {
	s := Quick().Merge(Settings{TransferDur: 5 * time.Second})
	assert.Equal(t, 5*time.Second, s.TransferDur)
	assert.Equal(t, Quick().Workers, s.Workers)
}

// TestRun_QuickCountsRight runs the parts that need only Redis, with tiny
// sizes, on one plain server: it checks what each part counts, never how
// fast anything is.
func TestRun_QuickCountsRight(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Redis")
	}
	s := Quick()
	s.Breakdown = true
	s.Calls, s.Ops, s.Holders, s.LoadHolders = 50, 300, 300, 50
	s.Contention = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var steps []Step
	var mu sync.Mutex
	rep, err := Run(ctx, Options{Settings: s, Standalone: true,
		Parts:    []string{"script_cost", "pipeline", "concurrent", "http", "contention", "memory"},
		Progress: func(st Step) { mu.Lock(); steps = append(steps, st); mu.Unlock() }})
	require.NoError(t, err)
	require.NotEmpty(t, steps)

	sc := rep.ScriptCost
	assert.Empty(t, sc.Skipped)
	assert.Len(t, sc.SeedPhases, s.Rounds)
	assert.Len(t, sc.CheckoutPhase, s.Rounds)
	assert.Len(t, sc.JSONPhases, s.Rounds)
	assert.Positive(t, sc.JSONUsec)
	assert.Positive(t, sc.JSONRatio)
	assert.Positive(t, sc.CheckoutUsec)
	assert.Positive(t, sc.SeedDeductUsec)
	cuts, err := cutsOf(lua.Library.Source)
	require.NoError(t, err)
	assert.Len(t, sc.Breakdown, len(cuts))
	assert.Len(t, sc.FloorPhases, s.Rounds)
	assert.Positive(t, sc.FloorDebitUsec)
	assert.Positive(t, sc.DebitOverFloor)
	assert.Positive(t, sc.FloorCheckoutUsec)
	assert.Positive(t, sc.CheckoutOverFloor)
	calls := map[string]float64{}
	for _, c := range sc.Commands {
		calls[c.Command] = c.Calls
	}
	assert.Equal(t, 1.0, calls["XADD"], "one event per checkout")
	assert.Equal(t, 1.0, calls["SET"], "one idempotency record per checkout")

	for _, c := range []Compare{rep.Pipeline, rep.Concurrent} {
		assert.Empty(t, c.Skipped)
		assert.Positive(t, c.EnginePerSec)
		assert.Positive(t, c.RawPerSec)
		assert.Zero(t, c.Errors)
	}
	assert.NotEmpty(t, rep.HTTP.Skipped, "no daemon command: http is skipped")
	assert.NotEmpty(t, rep.Relay.Skipped, "not asked for")

	c := rep.Contention
	assert.Positive(t, c.Lua.Ok)
	assert.Zero(t, c.Lua.Lost, "the script loses nothing")
	assert.Zero(t, c.Watch.Lost, "WATCH loses nothing")
	if *c.Lock.Expired == 0 {
		assert.Zero(t, c.Lock.Lost, "a lock that never expired while held loses nothing")
	}
	assert.Positive(t, c.GetSet.Ok)

	m := rep.Memory
	assert.Positive(t, m.BytesPerHolder)
	assert.Greater(t, m.WithTransient, m.BytesPerHolder)
	assert.Len(t, m.Keys, 4, "the holder hash, its record, its share of the expiry index and the outbox")
	assert.Positive(t, m.TxRecord)
	assert.Len(t, rep.Targets, 12+len(systemTargets(System{}))+len(hotTargets(Hot{})), "the system and hot parts' listed too, skipped")
}

// The Go benchmarks share one plain server, started on first use.
var shared struct {
	once sync.Once
	c    *clustertest.Cluster
	rdb  *redis.Client
	eng  *engine.Engine
	err  error
}

func server(b *testing.B) (*redis.Client, *engine.Engine) {
	b.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if shared.c, shared.err = clustertest.Start(ctx, clustertest.Options{Standalone: true}); shared.err != nil {
			return
		}
		shared.rdb = redis.NewClient(&redis.Options{Addr: shared.c.Addrs()[0], ContextTimeoutEnabled: true, PoolSize: 256})
		shared.eng = engine.New(shared.rdb, nil)
		shared.err = shared.eng.Load(ctx)
	})
	if shared.err != nil {
		b.Fatalf("redis: %v", shared.err)
	}
	return shared.rdb, shared.eng
}

var benchRun int

// benchHolders opens n rich holders for one benchmark run.
func benchHolders(b *testing.B, eng *engine.Engine, n int) []string {
	b.Helper()
	benchRun++
	ids := make([]string, n)
	ins := make([]instructions.Instruction, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("gobench-%d-%d", benchRun, i)
		ins[i] = openRich(ids[i])
	}
	for lo := 0; lo < n; lo += 500 {
		for _, o := range eng.ApplyBatch(context.Background(), ins[lo:min(lo+500, n)]) {
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
	}
	return ids
}

// BenchmarkEncode is the engine's own work before Redis: validation and
// encoding of the checkout.
func BenchmarkEncode(b *testing.B) {
	eng := engine.New(nil, nil)
	in := checkout("u1001", 55)
	_, _, _ = eng.Encode(in) // builds the slot tag table once
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := eng.Encode(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply_Checkout and BenchmarkFCall_Checkout are the concurrent
// part's pair for the checkout, from 64 goroutines.
func BenchmarkApply_Checkout(b *testing.B) {
	_, eng := server(b)
	holders := benchHolders(b, eng, b.N)
	ins := make([]instructions.Instruction, b.N)
	for i := range ins {
		ins[i] = checkout(holders[i], i)
	}
	b.ResetTimer()
	parallel(64, b.N, func(i int) {
		if _, err := eng.Apply(context.Background(), ins[i]); err != nil {
			b.Error(err)
		}
	})
}

func BenchmarkFCall_Checkout(b *testing.B) {
	rdb, eng := server(b)
	holders := benchHolders(b, eng, b.N)
	keys := make([][]string, b.N)
	args := make([][]any, b.N)
	for i := range keys {
		var err error
		if keys[i], args[i], err = eng.Encode(checkout(holders[i], i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	parallel(64, b.N, func(i int) {
		v, err := rdb.FCall(context.Background(), lua.FuncApply, keys[i], args[i]...).Result()
		if err == nil {
			err = appliedReply(v)
		}
		if err != nil {
			b.Error(err)
		}
	})
}

// BenchmarkApplyBatch_Debit sends debits in batches of 100.
func BenchmarkApplyBatch_Debit(b *testing.B) {
	_, eng := server(b)
	holders := benchHolders(b, eng, 1000)
	ins := make([]instructions.Instruction, b.N)
	for i := range ins {
		ins[i] = debit("d-"+strconv.Itoa(i), holders[i%len(holders)])
	}
	b.ResetTimer()
	for lo := 0; lo < b.N; lo += 100 {
		for _, o := range eng.ApplyBatch(context.Background(), ins[lo:min(lo+100, b.N)]) {
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
	}
}
