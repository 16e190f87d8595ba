package bench

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

func TestUnits_ReadsStateAmounts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0.000000", 0},
		{"10.000000", 10_000_000},
		{"0.00010000", 10_000},
		{"4200", 4200},
	} {
		got, err := units(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	_, err := units("1.2.3")
	assert.Error(t, err)
}

// TestRun_TransferQuickCountsRight runs the transfer part with the quick
// settings on a cluster of 3 masters, as engined bench --quick does: every
// pair spans two masters, every transfer commits, and the part's own
// conservation check (Run fails without it) passes.
func TestRun_TransferQuickCountsRight(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Redis")
	}
	s := Quick()
	s.LoadRounds, s.TransferDur = 2, 300*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Settings: s, Parts: []string{"transfer"}})
	require.NoError(t, err)

	tr := rep.Transfer
	require.Empty(t, tr.Skipped)
	assert.Zero(t, tr.Aborted, "nothing in a trade can be refused")
	assert.Positive(t, tr.Transfers)
	assert.Positive(t, tr.Singles)
	assert.Positive(t, tr.PerSec)
	assert.Positive(t, tr.SinglePerSec)
	assert.Positive(t, tr.Ratio)
	assert.Positive(t, tr.P50Ms)
	assert.GreaterOrEqual(t, tr.P99Ms, tr.P50Ms)
	assert.Len(t, tr.Phases, s.LoadRounds)
	assert.Len(t, tr.SinglePhases, s.LoadRounds)
	assert.Len(t, tr.PaymentPhases, s.LoadRounds)
	assert.Positive(t, tr.PaymentPerSec)
	assert.Positive(t, tr.PaymentRatio)
	assert.Equal(t, pairsPerWorker*s.Workers, tr.Pairs)
	assert.Equal(t, tr.Pairs, tr.CrossMaster, "with 3 masters every seller finds another master than its buyer")
	assert.Equal(t, "not asked for (--parts)", rep.Concurrent.Skipped)
}

// benchPairs opens n trade pairs on the shared server for one benchmark run.
func benchPairs(b *testing.B, eng *engine.Engine, n int) []tradePair {
	b.Helper()
	benchRun++
	pairs := make([]tradePair, n)
	var ins []instructions.Instruction
	for i := range pairs {
		pairs[i] = tradePair{buyer: fmt.Sprintf("gobench-%d-buyer-%d", benchRun, i), seller: fmt.Sprintf("gobench-%d-seller-%d", benchRun, i)}
		ins = append(ins, openBuyer(pairs[i].buyer), openSeller(pairs[i].seller))
	}
	for _, o := range eng.ApplyBatch(context.Background(), ins) {
		if o.Err != nil {
			b.Fatal(o.Err)
		}
	}
	return pairs
}

// BenchmarkTransfer_TwoPartTrade and BenchmarkApply_TradeSide are the
// transfer part's pair from 64 goroutines, on one plain server: the
// protocol's round trips and script runs without the spread over masters
// (engined bench measures that).
func BenchmarkTransfer_TwoPartTrade(b *testing.B) {
	_, eng := server(b)
	pairs := benchPairs(b, eng, pairsPerWorker*64)
	run := benchRun
	b.ResetTimer()
	parallel(64, b.N, func(i int) {
		st, err := eng.Transfer(context.Background(), trade(fmt.Sprintf("gobench-%d-t-%d", run, i), pairs[i%len(pairs)]))
		if err == nil && (st.Status != engine.TransferCommitted || !st.Complete) {
			err = fmt.Errorf("transfer %s: %s, complete %v, error %v", st.ID, st.Status, st.Complete, st.Error)
		}
		if err != nil {
			b.Error(err)
		}
	})
}

func BenchmarkApply_TradeSide(b *testing.B) {
	_, eng := server(b)
	pairs := benchPairs(b, eng, pairsPerWorker*64)
	b.ResetTimer()
	parallel(64, b.N, func(i int) {
		if _, err := eng.Apply(context.Background(), tradeSide(fmt.Sprintf("side-%d", i), pairs[i%len(pairs)].buyer)); err != nil {
			b.Error(err)
		}
	})
}

// BenchmarkRedisWork_Payment and BenchmarkRedisWork_Debit say what a P2P
// payment (the buyer pays the seller 10 USDT: a one-payer transfer) and a
// debit of the same 10 USDT cost the server, from 64 goroutines on one plain
// server: the round trips it served (INFO's total_reads_processed: a
// pipeline is one, or a few when it is long), the commands it ran (those
// the scripts call included) and its CPU in µs, per operation. The counts
// are steady from run to run; the CPU moves with the machine's load. The
// OneAtATime pair sends the same operations from one goroutine, each after
// the last one's answer: every call then reaches a server that was idle
// (docs/benchmarks.md, A run's cost, back to back and one at a time).
func BenchmarkRedisWork_Payment(b *testing.B)           { redisWorkPayment(b, 64) }
func BenchmarkRedisWork_Debit(b *testing.B)             { redisWorkDebit(b, 64) }
func BenchmarkRedisWork_PaymentOneAtATime(b *testing.B) { redisWorkPayment(b, 1) }
func BenchmarkRedisWork_DebitOneAtATime(b *testing.B)   { redisWorkDebit(b, 1) }

func redisWorkPayment(b *testing.B, workers int) {
	rdb, eng := server(b)
	pairs := benchPairs(b, eng, pairsPerWorker*64)
	run := benchRun
	redisWork(b, rdb, workers, func(i int) error {
		st, err := eng.Transfer(context.Background(), payment(fmt.Sprintf("gobench-%d-p-%d", run, i), pairs[i%len(pairs)]))
		if err == nil && (st.Status != engine.TransferCommitted || !st.Complete) {
			err = fmt.Errorf("payment %s: %s, complete %v, error %v", st.ID, st.Status, st.Complete, st.Error)
		}
		return err
	})
}

func redisWorkDebit(b *testing.B, workers int) {
	rdb, eng := server(b)
	pairs := benchPairs(b, eng, pairsPerWorker*64)
	run := benchRun
	redisWork(b, rdb, workers, func(i int) error {
		_, err := eng.Apply(context.Background(), instructions.New(fmt.Sprintf("gobench-%d-d-%d", run, i), pairs[i%len(pairs)].buyer).Debit("USDT", tradeUSDT))
		return err
	})
}

// redisWork runs op b.N times from workers goroutines and reports the
// server's round trips, commands and CPU per op, and the µs per FCALL that
// its commandstats count (the library's runs, the commands they call
// included).
func redisWork(b *testing.B, rdb *redis.Client, workers int, op func(i int) error) {
	ctx := context.Background()
	read := func() (reads, cmds, cpu float64, fcall cmdStat) {
		info, err := rdb.Info(ctx, "stats", "cpu", "commandstats").Result()
		if err != nil {
			b.Fatal(err)
		}
		f := func(name string) float64 {
			v, _ := strconv.ParseFloat(cluster.InfoField(info, name), 64)
			return v
		}
		return f("total_reads_processed"), f("total_commands_processed"), f("used_cpu_sys") + f("used_cpu_user"),
			parseCommandStats(info)["fcall"]
	}
	b.ResetTimer()
	r0, c0, u0, f0 := read()
	parallel(workers, b.N, func(i int) {
		if err := op(i); err != nil {
			b.Error(err)
		}
	})
	r1, c1, u1, f1 := read()
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric((r1-r0-1)/n, "redis-reads/op") // less the INFO's own read
	b.ReportMetric((c1-c0-1)/n, "redis-cmds/op")
	b.ReportMetric((u1-u0)*1e6/n, "redis-cpu-µs/op")
	if calls := f1.Calls - f0.Calls; calls > 0 {
		b.ReportMetric(float64(f1.Usec-f0.Usec)/float64(calls), "fcall-µs/call")
	}
}
