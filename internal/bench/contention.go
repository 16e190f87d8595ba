package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
)

// The contention part runs the seed article's four ways to take 1 from one
// hot balance, each with Workers goroutines for the same time, and counts
// lost updates: deductions that reported success but that the final
// balance does not show.

const (
	hotInitial = 1_000_000_000 // units; no scheme gets near zero
	lockTTL    = time.Second   // PX of the lock
	lockWait   = 200 * time.Millisecond
)

// releaseLock deletes the lock only if it still holds this worker's token:
// a worker whose lock expired must not delete the next holder's.
var releaseLock = redis.NewScript(releaseLockSource)

// counters of one scheme's run.
type counters struct {
	ok, errs, retries, timeouts, expired atomic.Int64
}

func (c *counters) scheme(d time.Duration, lost int64) Scheme {
	return Scheme{PerSec: round(float64(c.ok.Load()) / d.Seconds()), Lost: lost, Ok: c.ok.Load(), Errors: c.errs.Load()}
}

func ptr(v int64) *int64 { return &v }

// hammer runs op on workers goroutines until d has passed. Each op runs to
// its end with a context of its own: one cut short by the deadline would
// leave its outcome unknown and the count of lost updates wrong.
func hammer(workers int, d time.Duration, op func(w int)) time.Duration {
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	t := time.AfterFunc(d, func() { stop.Store(true) })
	defer t.Stop()
	for w := range workers {
		wg.Go(func() {
			for !stop.Load() {
				op(w)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

func runContention(ctx context.Context, e *env) (Contention, error) {
	const part = "contention"
	out := Contention{Workers: e.s.Workers, Seconds: e.s.Contention.Seconds(),
		LockTTLMs: int(lockTTL / time.Millisecond), LockWaitMs: int(lockWait / time.Millisecond)}
	bg := context.WithoutCancel(ctx)
	// The scripts must be on every master: the lock key may live anywhere.
	if _, err := e.loadScript(ctx, releaseLockSource); err != nil {
		return out, err
	}

	// GET then SET: two workers read the same value, both write value-1.
	key := e.prefix + ":hot:getset"
	if err := e.rdb.Set(ctx, key, hotInitial, 0).Err(); err != nil {
		return out, err
	}
	var gs counters
	took := hammer(e.s.Workers, e.s.Contention, func(int) {
		n, err := e.rdb.Get(bg, key).Int64()
		if err == nil {
			err = e.rdb.Set(bg, key, n-1, 0).Err()
		}
		count(&gs, err)
	})
	lost, err := plainLost(ctx, e, key, &gs)
	if err != nil {
		return out, err
	}
	out.GetSet = gs.scheme(took, lost)
	e.step(part, 1, 4, "get/set")

	// SET NX PX lock, GET, SET, token-checked release.
	key = e.prefix + ":hot:lock"
	lockKey := key + ":lock"
	if err := e.rdb.Set(ctx, key, hotInitial, 0).Err(); err != nil {
		return out, err
	}
	var lk counters
	var tokens atomic.Int64
	took = hammer(e.s.Workers, e.s.Contention, func(int) {
		token := strconv.FormatInt(tokens.Add(1), 10)
		deadline := time.Now().Add(lockWait)
		for {
			got, err := e.rdb.SetNX(bg, lockKey, token, lockTTL).Result()
			if err != nil {
				lk.errs.Add(1)
				return
			}
			if got {
				break
			}
			if time.Now().After(deadline) {
				lk.timeouts.Add(1)
				return
			}
			time.Sleep(time.Duration(200+rand.IntN(800)) * time.Microsecond)
		}
		n, err := e.rdb.Get(bg, key).Int64()
		if err == nil {
			err = e.rdb.Set(bg, key, n-1, 0).Err()
		}
		released, rerr := releaseLock.Run(bg, e.rdb, []string{lockKey}, token).Int64()
		if rerr == nil && released == 0 {
			lk.expired.Add(1)
		}
		count(&lk, err)
	})
	if lost, err = plainLost(ctx, e, key, &lk); err != nil {
		return out, err
	}
	out.Lock = lk.scheme(took, lost)
	out.Lock.Timeouts, out.Lock.Expired = ptr(lk.timeouts.Load()), ptr(lk.expired.Load())
	e.step(part, 2, 4, "lock")

	// WATCH, GET, MULTI SET EXEC, retried until it commits.
	key = e.prefix + ":hot:watch"
	if err := e.rdb.Set(ctx, key, hotInitial, 0).Err(); err != nil {
		return out, err
	}
	var wt counters
	took = hammer(e.s.Workers, e.s.Contention, func(int) {
		err := e.rdb.Watch(bg, func(tx *redis.Tx) error {
			n, err := tx.Get(bg, key).Int64()
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(bg, func(p redis.Pipeliner) error {
				p.Set(bg, key, n-1, 0)
				return nil
			})
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			wt.retries.Add(1)
			return
		}
		count(&wt, err)
	})
	if lost, err = plainLost(ctx, e, key, &wt); err != nil {
		return out, err
	}
	out.Watch = wt.scheme(took, lost)
	out.Watch.Retries = ptr(wt.retries.Load())
	e.step(part, 3, 4, "watch")

	// The engine: one debit per call, checked and applied in one script run.
	holder := e.prefix + "-hot"
	if _, err := e.eng.Apply(ctx, instructions.New("open", holder).Open().Credit("CNY", instructions.FromUnits(hotInitial, 2))); err != nil {
		return out, err
	}
	var lu counters
	var ids atomic.Int64
	took = hammer(e.s.Workers, e.s.Contention, func(int) {
		_, err := e.eng.Apply(bg, debit("hot-"+strconv.FormatInt(ids.Add(1), 10), holder))
		count(&lu, err)
	})
	st, err := e.eng.State(ctx, holder)
	if err != nil {
		return out, err
	}
	final, ok := instructions.ToUnits(st.Balances["CNY"].Available, 2)
	if !ok {
		return out, fmt.Errorf("hot holder balance %q", st.Balances["CNY"].Available)
	}
	out.Lua = lu.scheme(took, lu.ok.Load()-(hotInitial-final))
	e.step(part, 4, 4, "lua")

	out.LuaVsWatch = round(ratio(out.Lua.PerSec, out.Watch.PerSec))
	return out, nil
}

const releaseLockSource = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`

func count(c *counters, err error) {
	if err != nil {
		c.errs.Add(1)
		return
	}
	c.ok.Add(1)
}

// plainLost reads a string balance and counts the successes it lacks.
func plainLost(ctx context.Context, e *env, key string, c *counters) (int64, error) {
	final, err := e.rdb.Get(ctx, key).Int64()
	if err != nil {
		return 0, err
	}
	return c.ok.Load() - (hotInitial - final), nil
}
