package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger/ledgertest"
)

// relayGroup is the consumer group "engined relay" reads with (the
// relay's default).
const relayGroup = "atomledger-relay"

// outboxes are the outbox streams of the holders' slots.
func outboxes(holders []string) []string {
	seen := map[int]bool{}
	var keys []string
	for _, h := range holders {
		if s := cluster.HolderSlot(h); !seen[s] {
			seen[s] = true
			keys = append(keys, cluster.Outbox(s))
		}
	}
	return keys
}

// outboxState sums the entries left in the streams and those pending in the
// relay's group, and gives the consumers that hold pending entries.
func outboxState(t *testing.T, rdb *redis.ClusterClient, keys []string) (entries, pending int64, consumers map[string]int64) {
	t.Helper()
	ctx := context.Background()
	consumers = map[string]int64{}
	for _, k := range keys {
		n, err := rdb.XLen(ctx, k).Result()
		require.NoError(t, err)
		entries += n
		p, err := rdb.XPending(ctx, k, relayGroup).Result()
		if redis.HasErrorPrefix(err, "NOGROUP") {
			continue // no relay joined this stream yet
		}
		require.NoError(t, err)
		pending += p.Count
		for c, n := range p.Consumers {
			consumers[c] += n
		}
	}
	return entries, pending, consumers
}

// pendingNow counts the entries pending in the relay's group, in one
// pipeline. A stream without the group (no relay joined it yet) has none;
// any other error fails the test rather than counting as none.
func pendingNow(t *testing.T, rdb *redis.ClusterClient, keys []string) int64 {
	t.Helper()
	ctx := context.Background()
	pipe := rdb.Pipeline()
	cmds := make([]*redis.XPendingCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.XPending(ctx, k, relayGroup)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
	var n int64
	for i, c := range cmds {
		p, err := c.Result()
		if redis.HasErrorPrefix(err, "NOGROUP") {
			continue
		}
		require.NoError(t, err, "XPENDING %s", keys[i])
		n += p.Count
	}
	return n
}

// ledgerRows counts the instructions in the ledger.
func (r *ledgerRig) ledgerRows(t *testing.T) int64 {
	t.Helper()
	var n int64
	require.NoError(t, r.led.Pool().QueryRow(context.Background(), "SELECT count(*) FROM ledger.instructions").Scan(&n))
	return n
}

// TestRelay_KilledMidBatch runs "engined relay" as a process under a
// continuous load, kills it with SIGKILL while it holds entries it read but
// has not acknowledged (a batch in flight: written to PostgreSQL or not),
// and starts a new relay process, which claims the dead one's pending
// entries (--claim-idle 1s) and drains the outboxes. Every applied
// instruction must then be in the ledger exactly once, with reconcile
// finding no drift and the outboxes and their pending lists empty.
func TestRelay_KilledMidBatch(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := newLedgerRig(t)
	w := ledgertest.New(seed, "kill", 200)
	applied := r.applyAll(t, w.Opens())
	keys := outboxes(w.Holders)

	// The load: batches of random instructions, about 1,000 a second, until
	// stopped. It starts once the first relay delivers.
	var (
		loaded  atomic.Int64
		loadErr atomic.Value
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	ins := make(chan []instructions.Instruction, 4)
	startLoad := sync.OnceFunc(func() {
		wg.Go(func() { // the workload is not safe for concurrent use: one goroutine makes it
			defer close(ins)
			for {
				b := make([]instructions.Instruction, 50)
				for i := range b {
					b[i] = w.Next()
				}
				select {
				case <-stop:
					return
				case ins <- b:
				}
			}
		})
		wg.Go(func() {
			for b := range ins {
				for _, o := range r.eng.ApplyBatch(ctx, b) {
					switch {
					case o.Err == nil:
						loaded.Add(1)
					case errors.Is(o.Err, engine.ErrUnavailable):
						loadErr.Store(o.Err)
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	})
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
	t.Cleanup(stopLoad)

	relayArgs := []string{"relay", "--claim-idle", "1s"}
	// Kill a relay while it holds pending entries; a relay killed between
	// two rounds holds none, so try again (rare under this load).
	var dead map[string]int64
	for attempt := 1; attempt <= 5 && len(dead) == 0; attempt++ {
		d := startEngined(t, "", r.env, relayArgs...)
		deadline := time.Now().Add(3 * time.Minute)
		for r.ledgerRows(t) < int64(applied) && time.Now().Before(deadline) && d.running() {
			time.Sleep(20 * time.Millisecond)
		}
		startLoad()
		before := r.ledgerRows(t)
		for r.ledgerRows(t) < before+1000 && time.Now().Before(deadline) && d.running() {
			time.Sleep(20 * time.Millisecond)
		}
		require.True(t, d.running(), "the relay exited: %s", d.stderr.String())
		require.GreaterOrEqual(t, r.ledgerRows(t), before+1000, "the relay delivers")
		// Kill it as soon as it holds a batch: entries read, not yet
		// acknowledged (written to PostgreSQL or not). The pause between
		// two looks leaves the cores to the relay and the load: a batch
		// is pending for the time of its WAIT and PostgreSQL transaction,
		// many times a second, so the loop still catches one.
		for pendingNow(t, r.rdb, keys) == 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		d.signal(t, syscall.SIGKILL)
		<-d.done
		entries, pending, consumers := outboxState(t, r.rdb, keys)
		t.Logf("attempt %d: relay killed with %d events in the ledger, %d applied in Redis, %d in the outboxes, %d pending: %v",
			attempt, r.ledgerRows(t), int64(applied)+loaded.Load(), entries, pending, consumers)
		dead = consumers
	}
	require.NotEmpty(t, dead, "a relay was killed holding pending entries")

	// The load goes on a moment with no relay, then a new one takes over,
	// under the load until it has delivered some of it.
	time.Sleep(500 * time.Millisecond)
	final := startEngined(t, "", r.env, relayArgs...)
	before := r.ledgerRows(t)
	deadline := time.Now().Add(3 * time.Minute)
	for r.ledgerRows(t) < before+500 && time.Now().Before(deadline) && final.running() {
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, final.running(), "the new relay runs: %s", final.stderr.String())
	require.GreaterOrEqual(t, r.ledgerRows(t), before+500, "the new relay delivers under the load")
	stopLoad()
	if err := loadErr.Load(); err != nil {
		t.Fatalf("load: %v", err)
	}
	applied += int(loaded.Load())

	start := time.Now()
	var entries, pending int64
	var consumers map[string]int64
	deadline = time.Now().Add(3 * time.Minute)
	for {
		entries, pending, consumers = outboxState(t, r.rdb, keys)
		if (entries == 0 && pending == 0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("drained %v after the load stopped; %d instructions applied", time.Since(start).Round(time.Millisecond), applied)
	require.True(t, final.running(), "the new relay runs: %s", final.stderr.String())
	assert.Zero(t, entries, "outboxes empty")
	assert.Zero(t, pending, "no entry left pending, with the dead relay or the new one: %v", consumers)

	rep := r.waitInSync(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Zero(t, rep.EventsInFlight)
	assert.Equal(t, len(w.Holders), rep.InSync, "every holder has Redis's seq and digest in the ledger")
	assert.Empty(t, rep.Unbalanced)
	assert.Zero(t, rep.Parked)
	assert.Empty(t, rep.Refused)

	var rows, ids, refused int64
	require.NoError(t, r.led.Pool().QueryRow(ctx, "SELECT count(*), count(DISTINCT (holder, id)) FROM ledger.instructions").Scan(&rows, &ids))
	require.NoError(t, r.led.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.refused").Scan(&refused))
	assert.Equal(t, int64(applied), rows, "every applied instruction in the ledger once: nothing lost, nothing twice")
	assert.Equal(t, rows, ids)
	assert.Zero(t, refused)
}
