package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// The pipeline and concurrent parts run the same instructions (a one-op
// debit with a fresh id, round robin over LoadHolders holders) through the
// engine and through raw FCALL of the library's apply function with the keys and arguments
// Engine.Encode gave in advance, in alternated phases of Ops instructions.
// The engine is handed ready instructions too: what is timed on its side is
// validation, encoding, the round trip and reply parsing; on the raw side
// the round trip alone.

// phaseFunc readies one phase of instructions (untimed) and returns the
// timed run, which reports how many failed.
type phaseFunc func(ins []instructions.Instruction) (run func(ctx context.Context) (errs int64, firstErr error), err error)

// compare alternates engine and raw phases and fills a Compare.
func compare(ctx context.Context, e *env, l *loadSet, part string, engine, raw phaseFunc) (Compare, error) {
	var engRates, rawRates, ratios []float64
	out := Compare{Rounds: e.s.LoadRounds, OpsPerPhase: e.s.Ops, Holders: len(l.holders)}
	for r := range e.s.LoadRounds {
		kinds := []string{"engine", "raw"}
		if r%2 == 1 {
			slices.Reverse(kinds)
		}
		var er, rr float64
		for _, k := range kinds {
			ins := l.debits(e.s.Ops)
			fn := engine
			if k == "raw" {
				fn = raw
			}
			if err := e.dropOutboxes(ctx, l); err != nil {
				return Compare{}, err
			}
			run, err := fn(ins)
			if err != nil {
				return Compare{}, err
			}
			start := time.Now()
			errs, err := run(ctx)
			rate := float64(len(ins)) / time.Since(start).Seconds()
			out.Errors += errs
			if err != nil {
				return Compare{}, fmt.Errorf("%s phase: %d of %d failed, first: %w", k, errs, len(ins), err)
			}
			if k == "engine" {
				er = rate
				engRates = append(engRates, rate)
			} else {
				rr = rate
				rawRates = append(rawRates, rate)
			}
		}
		ratios = append(ratios, ratio(er, rr))
		e.step(part, r+1, e.s.LoadRounds, "")
	}
	for i := range engRates {
		out.EnginePhases = append(out.EnginePhases, round(engRates[i]))
		out.RawPhases = append(out.RawPhases, round(rawRates[i]))
	}
	out.EnginePerSec = round(median(engRates))
	out.RawPerSec = round(median(rawRates))
	out.Ratio = round(median(ratios))
	return out, nil
}

// dropOutboxes deletes, on a cluster the run started, the outboxes the
// load holders write to: no relay runs in these parts, and hundreds of
// thousands of events piling up would make each phase pay for the memory
// the previous ones took.
func (e *env) dropOutboxes(ctx context.Context, l *loadSet) error {
	if !e.owned() {
		return nil
	}
	seen := map[int]bool{}
	pipe := e.rdb.Pipeline()
	for _, h := range l.holders {
		if s := cluster.HolderSlot(h); !seen[s] {
			seen[s] = true
			pipe.Del(ctx, cluster.Outbox(s))
		}
	}
	_, err := pipe.Exec(ctx)
	return err
}

// errCount collects the failures of a phase's workers.
type errCount struct {
	n     atomic.Int64
	mu    sync.Mutex
	first error
}

func (c *errCount) add(err error) {
	if err == nil {
		return
	}
	if c.n.Add(1) == 1 {
		c.mu.Lock()
		c.first = err
		c.mu.Unlock()
	}
}

func (c *errCount) result() (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n.Load(), c.first
}

// encodeAll encodes ins for raw FCALL.
func (e *env) encodeAll(ins []instructions.Instruction) ([][]string, [][]any, error) {
	keys := make([][]string, len(ins))
	args := make([][]any, len(ins))
	for i, in := range ins {
		var err error
		if keys[i], args[i], err = e.eng.Encode(in); err != nil {
			return nil, nil, err
		}
	}
	return keys, args, nil
}

// parallel runs n units of work on workers goroutines: fn(i) for each i.
func parallel(workers, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

func runPipeline(ctx context.Context, e *env, l *loadSet) (Compare, error) {
	bs := e.s.BatchSize
	batches := func(n int) int { return (n + bs - 1) / bs }
	engine := func(ins []instructions.Instruction) (func(context.Context) (int64, error), error) {
		return func(ctx context.Context) (int64, error) {
			var ec errCount
			parallel(e.s.BatchWorkers, batches(len(ins)), func(b int) {
				for _, o := range e.eng.ApplyBatch(ctx, ins[b*bs:min((b+1)*bs, len(ins))]) {
					ec.add(o.Err)
				}
			})
			return ec.result()
		}, nil
	}
	raw := func(ins []instructions.Instruction) (func(context.Context) (int64, error), error) {
		keys, args, err := e.encodeAll(ins)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (int64, error) {
			var ec errCount
			parallel(e.s.BatchWorkers, batches(len(ins)), func(b int) {
				lo, hi := b*bs, min((b+1)*bs, len(ins))
				pipe := e.rdb.Pipeline()
				cmds := make([]*redis.Cmd, 0, hi-lo)
				for i := lo; i < hi; i++ {
					cmds = append(cmds, pipe.FCall(ctx, lua.FuncApply, keys[i], args[i]...))
				}
				_, _ = pipe.Exec(ctx)
				for _, c := range cmds {
					v, err := c.Result()
					if err == nil {
						err = appliedReply(v)
					}
					ec.add(err)
				}
			})
			return ec.result()
		}, nil
	}
	out, err := compare(ctx, e, l, "pipeline", engine, raw)
	out.Workers, out.BatchSize = e.s.BatchWorkers, bs
	return out, err
}

func runConcurrent(ctx context.Context, e *env, l *loadSet) (Compare, error) {
	engine := func(ins []instructions.Instruction) (func(context.Context) (int64, error), error) {
		return func(ctx context.Context) (int64, error) {
			var ec errCount
			parallel(e.s.Workers, len(ins), func(i int) {
				_, err := e.eng.Apply(ctx, ins[i])
				ec.add(err)
			})
			return ec.result()
		}, nil
	}
	raw := func(ins []instructions.Instruction) (func(context.Context) (int64, error), error) {
		keys, args, err := e.encodeAll(ins)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (int64, error) {
			var ec errCount
			parallel(e.s.Workers, len(ins), func(i int) {
				v, err := e.rdb.FCall(ctx, lua.FuncApply, keys[i], args[i]...).Result()
				if err == nil {
					err = appliedReply(v)
				}
				ec.add(err)
			})
			return ec.result()
		}, nil
	}
	out, err := compare(ctx, e, l, "concurrent", engine, raw)
	out.Workers = e.s.Workers
	return out, err
}
