package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger/ledgertest"
)

// outboxSlots are the slots of the holders, each once.
func outboxSlots(holders []string) []int {
	seen := map[int]bool{}
	var slots []int
	for _, h := range holders {
		if s := cluster.HolderSlot(h); !seen[s] {
			seen[s] = true
			slots = append(slots, s)
		}
	}
	return slots
}

// ledgerRows counts the instructions in the ledger.
func (r *ledgerRig) ledgerRows(t *testing.T) int64 {
	t.Helper()
	var n int64
	require.NoError(t, r.led.Pool().QueryRow(context.Background(), "SELECT count(*) FROM ledger.instructions").Scan(&n))
	return n
}

// TestRelay_KilledMidBatch runs "engined relay" as a process under a
// continuous load, kills it with SIGKILL while the outboxes hold events (a
// batch read, in flight to PostgreSQL, or committed and not yet removed
// from its streams), and starts a new relay process, which reads every
// stream from its head and drains the outboxes. Every applied instruction
// must then be in the ledger exactly once, with reconcile finding no drift
// and the outboxes empty.
func TestRelay_KilledMidBatch(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := newLedgerRig(t)
	w := ledgertest.New(seed, "kill", 200)
	applied := r.applyAll(t, w.Opens())
	slots := outboxSlots(w.Holders)

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

	relayArgs := []string{"relay"}
	// Kill a relay while the outboxes hold events; a relay killed when
	// they hold none left nothing half-done, so try again (rare under this
	// load).
	var left int64
	for attempt := 1; attempt <= 5 && left == 0; attempt++ {
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
		// Kill it as soon as the outboxes hold events: under this load the
		// relay has a batch between its read and its removal most of the
		// time. The pause between two looks leaves the cores to the relay
		// and the load.
		for outboxLen(t, r.rdb, slots) == 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		d.signal(t, syscall.SIGKILL)
		<-d.done
		left = outboxLen(t, r.rdb, slots)
		t.Logf("attempt %d: relay killed with %d events in the ledger, %d applied in Redis, %d in the outboxes",
			attempt, r.ledgerRows(t), int64(applied)+loaded.Load(), left)
	}
	require.Positive(t, left, "a relay was killed with events in the outboxes")

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
	var entries int64
	deadline = time.Now().Add(3 * time.Minute)
	for {
		entries = outboxLen(t, r.rdb, slots)
		if entries == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("drained %v after the load stopped; %d instructions applied", time.Since(start).Round(time.Millisecond), applied)
	require.True(t, final.running(), "the new relay runs: %s", final.stderr.String())
	assert.Zero(t, entries, "outboxes empty")

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
