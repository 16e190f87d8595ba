package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The fault tests kill and pause Redis servers of clusters of their own and
// take a minute: `make test-faults` runs them, `make test` leaves them out.
const envFaults = "ATOMLEDGER_FAULTS"

func needFaults(t *testing.T) {
	t.Helper()
	if os.Getenv(envFaults) != "1" {
		t.Skipf("fault injection test: run with %s=1 (make test-faults)", envFaults)
	}
	needRedis(t)
}

// faultLedger records every instruction sent to a set of holders, by id,
// and the answer it finally got.
type faultLedger struct {
	mu    sync.Mutex
	delta map[string]int64  // id -> signed minor units of CNY
	acked map[string]int64  // id -> seq of an applied answer
	sent  map[string]string // id -> holder
}

func newFaultLedger() *faultLedger {
	return &faultLedger{delta: map[string]int64{}, acked: map[string]int64{}, sent: map[string]string{}}
}

func (l *faultLedger) send(id, holder string, delta int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delta[id], l.sent[id] = delta, holder
}

func (l *faultLedger) ack(id string, seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked[id] = seq
}

func (l *faultLedger) isAcked(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.acked[id]
	return ok
}

// faultRig is a cluster of its own, an engine on it and holders with money.
type faultRig struct {
	c       *clustertest.Cluster
	rdb     *redis.ClusterClient
	eng     *engine.Engine
	holders []string
	led     *faultLedger
}

func newFaultRig(t *testing.T, opt *engine.Options, holders int) *faultRig {
	t.Helper()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 3, Replicas: 1})
	// As the daemon does: re-read the slot map every second.
	rdb := c.Client(&redis.ClusterOptions{ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		ClusterStateReloadInterval: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	r := &faultRig{c: c, rdb: rdb, eng: engine.New(rdb, opt), led: newFaultLedger()}
	ctx := context.Background()
	require.NoError(t, r.eng.Load(ctx))
	for i := range holders {
		h := fmt.Sprintf("fh%02d-%s", i, newID("x"))
		id := "open-" + h
		r.led.send(id, h, 100000)
		res, err := applyRetrying(ctx, r.eng, instructions.New(id, h).Open().Credit("CNY", "1000.00"))
		require.NoError(t, err)
		r.led.ack(id, res.Seq)
		r.holders = append(r.holders, h)
	}
	return r
}

// applyRetrying applies in, sent again verbatim while it is answered
// UNAVAILABLE (with replica acknowledgements, a replica slow to confirm on a
// loaded machine), for up to two minutes.
func applyRetrying(ctx context.Context, e *engine.Engine, in instructions.Instruction) (instructions.Result, error) {
	giveUp := time.Now().Add(2 * time.Minute)
	for {
		res, err := e.Apply(ctx, in)
		if !errors.Is(err, engine.ErrUnavailable) || time.Now().After(giveUp) {
			return res, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// instruction makes a random credit or debit of CNY for a holder and records it.
func (r *faultRig) instruction(rng *rand.Rand, prefix string) instructions.Instruction {
	h := r.holders[rng.IntN(len(r.holders))]
	id := newID(prefix)
	units := int64(1 + rng.IntN(5000))
	amount := instructions.FromUnits(units, 2)
	in := instructions.New(id, h)
	if rng.IntN(2) == 0 {
		r.led.send(id, h, units)
		return in.Credit("CNY", amount)
	}
	r.led.send(id, h, -units)
	return in.Debit("CNY", amount)
}

// answer records the answer to in; it reports whether it is final.
func (r *faultRig) answer(t *testing.T, in instructions.Instruction, res instructions.Result, err error) bool {
	switch {
	case err == nil:
		r.led.ack(in.ID, res.Seq)
		return true
	case errors.Is(err, engine.ErrUnavailable):
		return false
	case errors.Is(err, engine.ErrInsufficientFunds):
		return true
	default:
		t.Errorf("%s: unexpected answer: %v", in.ID, err)
		return true
	}
}

// applyUntilAnswered applies in, retrying it verbatim while the answer is
// UNAVAILABLE, until it has an answer or giveUp has passed.
func (r *faultRig) applyUntilAnswered(t *testing.T, in instructions.Instruction, giveUp time.Time, unavailable *atomic.Int64) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
		res, err := r.eng.Apply(ctx, in)
		cancel()
		if r.answer(t, in, res, err) {
			return
		}
		unavailable.Add(1)
		if time.Now().After(giveUp) {
			t.Errorf("%s: still UNAVAILABLE after retrying until the deadline: %v", in.ID, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// batchUntilAnswered is applyUntilAnswered for a batch: the entries answered
// UNAVAILABLE go again, verbatim, in the next batch.
func (r *faultRig) batchUntilAnswered(t *testing.T, ins []instructions.Instruction, giveUp time.Time, unavailable *atomic.Int64) {
	for len(ins) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
		outs := r.eng.ApplyBatch(ctx, ins)
		cancel()
		var again []instructions.Instruction
		for i, o := range outs {
			if !r.answer(t, ins[i], o.Result, o.Err) {
				again = append(again, ins[i])
			}
		}
		unavailable.Add(int64(len(again)))
		if len(again) > 0 && time.Now().After(giveUp) {
			t.Errorf("%d instructions still UNAVAILABLE at the deadline", len(again))
			return
		}
		if len(again) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		ins = again
	}
}

// verify reads every holder's state and events and checks that every
// instruction applied at most once, that each holder's seq runs 1..n with one
// event per applied instruction, and that the balance is the sum of what
// applied. It returns the acknowledged instructions the cluster lost.
func (r *faultRig) verify(t *testing.T) (lost []string) {
	t.Helper()
	ctx := context.Background()
	events := map[string]map[string]int64{} // holder -> id -> seq
	for _, h := range r.holders {
		events[h] = map[string]int64{}
	}
	streams := map[string]bool{}
	for _, h := range r.holders {
		streams[cluster.Outbox(cluster.HolderSlot(h))] = true
	}
	for key := range streams {
		msgs, err := r.rdb.XRange(ctx, key, "-", "+").Result()
		require.NoError(t, err)
		for _, m := range msgs {
			h, _ := m.Values["holder"].(string)
			evs, ok := events[h]
			if !ok {
				continue
			}
			id, _ := m.Values["id"].(string)
			seq, err := strconv.ParseInt(m.Values["seq"].(string), 10, 64)
			require.NoError(t, err)
			if prev, dup := evs[id]; dup {
				t.Errorf("holder %s: instruction %s applied twice (seq %d and %d)", h, id, prev, seq)
			}
			evs[id] = seq
		}
	}
	r.led.mu.Lock()
	defer r.led.mu.Unlock()
	for _, h := range r.holders {
		st, err := r.eng.State(ctx, h)
		require.NoError(t, err)
		evs := events[h]
		require.Len(t, evs, int(st.Seq), "holder %s: one event per applied instruction", h)
		seen := make([]bool, st.Seq+1)
		var sum int64
		for id, seq := range evs {
			if seq < 1 || seq > st.Seq || seen[seq] {
				t.Errorf("holder %s: seq %d of %s out of 1..%d or repeated", h, seq, id, st.Seq)
				continue
			}
			seen[seq] = true
			d, ok := r.led.delta[id]
			if !assert.True(t, ok, "holder %s: event of an instruction never sent: %s", h, id) {
				continue
			}
			assert.Equal(t, h, r.led.sent[id])
			sum += d
			if acked, ok := r.led.acked[id]; ok {
				assert.Equal(t, acked, seq, "holder %s: %s answered seq %d, recorded %d", h, id, acked, seq)
			}
		}
		for id, seq := range r.led.acked {
			if r.led.sent[id] == h {
				if _, ok := evs[id]; !ok {
					lost = append(lost, fmt.Sprintf("%s seq %d (%+d)", id, seq, r.led.delta[id]))
				}
			}
		}
		want := instructions.FromUnits(sum, 2)
		assert.Equal(t, want, st.Balances["CNY"].Available, "holder %s: balance is the sum of the applied instructions", h)
	}
	return lost
}

// replicaOf returns the address of the replica of master.
func replicaOf(t *testing.T, master string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(context.Background(), "replication").Result()
	require.NoError(t, err)
	for line := range strings.Lines(info) {
		// slave0:ip=127.0.0.1,port=7001,state=online,offset=...,lag=0
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "slave0:"); ok {
			var ip, port string
			for _, kv := range strings.Split(v, ",") {
				k, val, _ := strings.Cut(kv, "=")
				switch k {
				case "ip":
					ip = val
				case "port":
					port = val
				}
			}
			return ip + ":" + port
		}
	}
	t.Fatalf("%s has no replica", master)
	return ""
}

type failoverRun struct {
	serveAgain  time.Duration
	lost        []string
	unavailable int64
	acked       int
	// windowAcks counts the instructions of the killed master's holders
	// acknowledged while its replica was cut off: what asynchronous
	// replication loses in the failover.
	windowAcks int64
}

// runFailover puts workers on the holders, then cuts the link of the first
// holder's master to its replica and keeps the replica stopped for at least
// a second, until the window has what the run needs (an instruction of the
// master acknowledged meanwhile, which then exists nowhere else, or with
// replica acknowledgements one answered UNAVAILABLE); kills the master;
// resumes the replica, which takes over; and keeps the workers going until
// a holder of the killed master is served again, and 5 s more.
//
// The waits are for what happened, not for a time: on a loaded machine a
// second can pass with no answer at all. Their deadlines are generous, and
// how soon the engine served again is logged, not asserted.
func runFailover(t *testing.T, opt *engine.Options) failoverRun {
	r := newFaultRig(t, opt, 30)
	ctx := context.Background()
	master, err := r.c.MasterOf(ctx, cluster.HolderSlot(r.holders[0]))
	require.NoError(t, err)
	replica := replicaOf(t, master)
	victimSlots := map[string]bool{}
	for _, h := range r.holders {
		if m, err := r.c.MasterOf(ctx, cluster.HolderSlot(h)); err == nil && m == master {
			victimSlots[h] = true
		}
	}

	var (
		stop        atomic.Bool
		cutOff      atomic.Bool  // the replica is frozen and its link gone
		windowAcks  atomic.Int64 // see failoverRun
		killedAt    atomic.Int64 // unix ns; 0 before the kill
		servedAt    atomic.Int64 // first answer from the new master, unix ns
		unavailable atomic.Int64
		wg          sync.WaitGroup
	)
	giveUp := time.Now().Add(3 * time.Minute)
	for w := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !stop.Load() {
				if w < 4 {
					in := r.instruction(rng, fmt.Sprintf("w%d", w))
					window := cutOff.Load()
					r.applyUntilAnswered(t, in, giveUp, &unavailable)
					if k := killedAt.Load(); k != 0 && victimSlots[in.Holder] {
						servedAt.CompareAndSwap(0, time.Now().UnixNano())
					}
					if window && killedAt.Load() == 0 && victimSlots[in.Holder] && r.led.isAcked(in.ID) {
						windowAcks.Add(1)
					}
					continue
				}
				ins := make([]instructions.Instruction, 8)
				for i := range ins {
					ins[i] = r.instruction(rng, fmt.Sprintf("b%d", w))
				}
				r.batchUntilAnswered(t, ins, giveUp, &unavailable)
			}
		})
	}

	time.Sleep(2 * time.Second)
	// Freeze the replica, then have the master drop its link: what the
	// master acknowledges from now on exists nowhere else, and the frozen
	// replica cannot reconnect to fetch it.
	rp := processID(t, replica)
	require.NoError(t, syscall.Kill(rp, syscall.SIGSTOP))
	resumed := false
	defer func() {
		if !resumed {
			_ = syscall.Kill(rp, syscall.SIGCONT)
		}
	}()
	mc := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1})
	require.NoError(t, mc.Do(ctx, "client", "kill", "type", "replica").Err())
	_ = mc.Close()
	unavailableBefore := unavailable.Load()
	cutOff.Store(true)
	time.Sleep(time.Second)
	windowDone := func() bool { return windowAcks.Load() > 0 }
	if opt != nil && opt.MinReplicaAcks > 0 {
		windowDone = func() bool { return unavailable.Load() > unavailableBefore }
	}
	require.Eventually(t, windowDone, 2*time.Minute, 10*time.Millisecond,
		"no instruction of the master answered while its replica was cut off")

	require.NoError(t, r.c.Kill(master))
	kill := time.Now()
	killedAt.Store(kill.UnixNano())
	require.NoError(t, syscall.Kill(rp, syscall.SIGCONT))
	resumed = true
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	newMaster, err := r.c.WaitFailover(wctx, master)
	cancel()
	require.NoError(t, err)
	t.Logf("killed master %s at %s; %s took over after %v", master, kill.Format("15:04:05.000"), newMaster, time.Since(kill).Round(time.Millisecond))
	// The old master comes back as the new one's replica: with
	// MinReplicaAcks 1, its slots serve again only from then on.
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	require.NoError(t, r.c.Restart(rctx, master))
	cancel()

	assert.Eventually(t, func() bool { return servedAt.Load() != 0 }, 2*time.Minute, 10*time.Millisecond,
		"no instruction of a holder of the killed master was answered after the kill")
	time.Sleep(5 * time.Second)
	stop.Store(true)
	wg.Wait()

	var run failoverRun
	if s := servedAt.Load(); s != 0 {
		run.serveAgain = time.Unix(0, s).Sub(kill)
	}
	run.lost = r.verify(t)
	run.unavailable = unavailable.Load()
	run.windowAcks = windowAcks.Load()
	r.led.mu.Lock()
	run.acked = len(r.led.acked)
	r.led.mu.Unlock()
	return run
}

// TestFaults_FailoverAppliesOnceAndReplicaAcksLoseNothing kills a master
// under load twice, in the same scenario: once with asynchronous
// replication, where it must lose acknowledged instructions (else the
// scenario does not produce the loss the second run guards against), and
// once with MinReplicaAcks 1, where it must lose none.
func TestFaults_FailoverAppliesOnceAndReplicaAcksLoseNothing(t *testing.T) {
	needFaults(t)
	t.Run("without replica acknowledgements the failover loses acknowledged instructions", func(t *testing.T) {
		run := runFailover(t, nil)
		t.Logf("served again %v after the kill; %d acknowledged, %d of them on the killed master while its replica was cut off, %d answers UNAVAILABLE (retried); acknowledged and lost: %d",
			run.serveAgain.Round(time.Millisecond), run.acked, run.windowAcks, run.unavailable, len(run.lost))
		for i, l := range run.lost {
			if i == 20 {
				t.Logf("... and %d more", len(run.lost)-i)
				break
			}
			t.Logf("lost: %s", l)
		}
		require.Positive(t, run.windowAcks, "the master acknowledged instructions its cut-off replica never got")
		assert.NotEmpty(t, run.lost, "the scenario loses what only the killed master had: without that, the second run proves nothing")
	})
	t.Run("with MinReplicaAcks 1 nothing acknowledged is lost", func(t *testing.T) {
		run := runFailover(t, &engine.Options{MinReplicaAcks: 1, ReplicaAckTimeout: 500 * time.Millisecond})
		t.Logf("served again %v after the kill; %d acknowledged, %d of them on the killed master while its replica was cut off, %d answers UNAVAILABLE (retried); acknowledged and lost: %d",
			run.serveAgain.Round(time.Millisecond), run.acked, run.windowAcks, run.unavailable, len(run.lost))
		assert.Positive(t, run.unavailable, "while the replica was cut off, the master's answers were held back as UNAVAILABLE")
		assert.Empty(t, run.lost, "acknowledged instructions lost despite MinReplicaAcks")
	})
}

// TestFaults_FunctionFlushUnderLoad flushes the library (FUNCTION FLUSH) of
// every master several times and kills and restarts a replica while
// goroutines apply instructions and batches: nobody sees "Function not
// found" or any other failure, and every acknowledged instruction is there
// once.
func TestFaults_FunctionFlushUnderLoad(t *testing.T) {
	needFaults(t)
	for _, tc := range []struct {
		name           string
		opt            *engine.Options
		restartReplica bool
	}{
		{"with asynchronous replication and a replica restart", nil, true},
		// A master whose only replica is down cannot acknowledge anything
		// under MinReplicaAcks 1: that case flushes functions only.
		{"with MinReplicaAcks 1", &engine.Options{MinReplicaAcks: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFaultRig(t, tc.opt, 20)
			ctx := context.Background()
			var (
				stop     atomic.Bool
				answered atomic.Int64
				wg       sync.WaitGroup
			)
			check := func(in instructions.Instruction, res instructions.Result, err error) {
				answered.Add(1)
				switch {
				case err == nil:
					r.led.ack(in.ID, res.Seq)
				case errors.Is(err, engine.ErrInsufficientFunds):
				default:
					t.Errorf("%s: %v", in.ID, err)
				}
			}
			for w := range 6 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
					for !stop.Load() {
						if w < 3 {
							in := r.instruction(rng, fmt.Sprintf("w%d", w))
							res, err := r.eng.Apply(ctx, in)
							check(in, res, err)
							continue
						}
						ins := make([]instructions.Instruction, 8)
						for i := range ins {
							ins[i] = r.instruction(rng, fmt.Sprintf("b%d", w))
						}
						for i, o := range r.eng.ApplyBatch(ctx, ins) {
							check(ins[i], o.Result, o.Err)
						}
					}
				})
			}
			// Every master that runs is flushed, and must say OK (a replica
			// refuses FUNCTION FLUSH, a write: its master's flush reaches it).
			// The replica killed here is left out while it is down.
			down := ""
			flushes := 0
			flush := func() {
				for _, n := range r.c.Nodes {
					if n.Addr == down {
						continue
					}
					c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
					role, err := c.Do(ctx, "ROLE").Slice()
					require.NoError(t, err, "ROLE on %s", n.Addr)
					if role[0] == "master" {
						err = c.FunctionFlush(ctx).Err()
						require.NoError(t, err, "FUNCTION FLUSH on %s", n.Addr)
						flushes++
					}
					_ = c.Close()
				}
			}
			replica := replicaOf(t, r.c.MasterAddrs()[0])
			for i := range 6 {
				time.Sleep(700 * time.Millisecond)
				flush()
				switch {
				case !tc.restartReplica:
				case i == 1:
					require.NoError(t, r.c.Kill(replica))
					down = replica
				case i == 3:
					rctx, cancel := context.WithTimeout(ctx, time.Minute)
					require.NoError(t, r.c.Restart(rctx, replica))
					cancel()
					down = ""
				}
			}
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			require.NoError(t, r.c.WaitReady(rctx))
			cancel()
			flush()
			time.Sleep(time.Second)
			stop.Store(true)
			wg.Wait()
			t.Logf("%d answers, %d applied, %d node flushes", answered.Load(), len(r.led.acked), flushes)
			assert.Empty(t, r.verify(t), "acknowledged instructions missing")
		})
	}
}

// TestFaults_NewEmptyMasterGivenSlots adds a master that has never had the
// library and moves the slots of half the holders to it while goroutines
// apply instructions and batches: the first calls it gets answer "Function
// not found", the engine loads the library there and sends them again.
// Callers see nothing but UNAVAILABLE, retried; every acknowledged
// instruction is there once, and balances add up.
func TestFaults_NewEmptyMasterGivenSlots(t *testing.T) {
	needFaults(t)
	r := newFaultRig(t, nil, 20)
	ctx := context.Background()
	added, err := r.c.AddMaster(ctx)
	require.NoError(t, err)
	ac := redis.NewClient(&redis.Options{Addr: added.Addr})
	defer ac.Close()
	libs, err := ac.FunctionList(ctx, redis.FunctionListQuery{}).Result()
	require.NoError(t, err)
	require.Empty(t, libs, "the new master starts without the library")

	var (
		stop        atomic.Bool
		unavailable atomic.Int64
		wg          sync.WaitGroup
	)
	giveUp := time.Now().Add(2 * time.Minute)
	for w := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !stop.Load() {
				if w < 3 {
					r.applyUntilAnswered(t, r.instruction(rng, fmt.Sprintf("w%d", w)), giveUp, &unavailable)
					continue
				}
				ins := make([]instructions.Instruction, 8)
				for i := range ins {
					ins[i] = r.instruction(rng, fmt.Sprintf("b%d", w))
				}
				r.batchUntilAnswered(t, ins, giveUp, &unavailable)
			}
		})
	}
	// The slots of every other holder move, one at a time, under load.
	moved := map[int]bool{}
	for i, h := range r.holders {
		slot := cluster.HolderSlot(h)
		if i%2 == 1 || moved[slot] {
			continue
		}
		moved[slot] = true
		owner, err := r.c.MasterOf(ctx, slot)
		require.NoError(t, err)
		var src *clustertest.Node
		for _, n := range r.c.Nodes {
			if n.Addr == owner {
				src = n
			}
		}
		require.NotNil(t, src)
		migrateSlot(ctx, t, slot, src, added)
		time.Sleep(200 * time.Millisecond)
	}
	// Load until the new master has been called and given the library,
	// rather than for a second a loaded machine may spend on other things.
	assert.Eventually(t, func() bool {
		libs, err = ac.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		return err == nil && len(libs) == 1
	}, 2*time.Minute, 20*time.Millisecond, "the engine loaded the library on the new master")
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d slots moved, %d UNAVAILABLE answers retried, %d applied", len(moved), unavailable.Load(), len(r.led.acked))
	assert.Empty(t, r.verify(t), "acknowledged instructions missing")
}
