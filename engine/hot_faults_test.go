package engine_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
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
	"github.com/atomledger/atomledger/stored"
)

// hotRig is a cluster of its own with a hot merchant on it.
type hotRig struct {
	c     *clustertest.Cluster
	rdb   *redis.ClusterClient
	eng   *engine.Engine
	h     string
	lanes int
}

func newHotRig(t *testing.T, copt clustertest.Options, eopt *engine.Options, lanes int) *hotRig {
	t.Helper()
	c := clustertest.StartForTest(t, copt)
	// As the daemon does: re-read the slot map every second.
	rdb := c.Client(&redis.ClusterOptions{ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		ClusterStateReloadInterval: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	r := &hotRig{c: c, rdb: rdb, eng: engine.New(rdb, eopt), h: newID("merchant"), lanes: lanes}
	ctx := context.Background()
	require.NoError(t, r.eng.Load(ctx))
	_, err := applyRetrying(ctx, r.eng, instructions.New("open-"+r.h, r.h).OpenHot(lanes))
	require.NoError(t, err)
	return r
}

// masters gives the master of each lane.
func (r *hotRig) masters(t *testing.T) []string {
	t.Helper()
	out := make([]string, r.lanes)
	for i := range out {
		m, err := r.c.MasterOf(context.Background(), cluster.HolderSlot(instructions.LaneHolder(r.h, i)))
		require.NoError(t, err)
		out[i] = m
	}
	return out
}

// laneUnits reads each lane's available CNY, in minor units.
func (r *hotRig) laneUnits(t *testing.T) []int64 {
	t.Helper()
	out := make([]int64, r.lanes)
	for i := range out {
		v, err := r.rdb.HGet(context.Background(), cluster.Holder(instructions.LaneHolder(r.h, i)), stored.PrefixBalance+"CNY").Result()
		if !errors.Is(err, redis.Nil) {
			require.NoError(t, err)
		}
		out[i], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}

// events counts, per lane, the events of each instruction id.
func (r *hotRig) events(t *testing.T) []map[string]int {
	t.Helper()
	out := make([]map[string]int, r.lanes)
	for i := range out {
		name := instructions.LaneHolder(r.h, i)
		msgs, err := r.rdb.XRange(context.Background(), cluster.Outbox(cluster.HolderSlot(name)), "-", "+").Result()
		require.NoError(t, err)
		out[i] = map[string]int{}
		for _, m := range msgs {
			if m.Values["holder"] == name {
				id, _ := m.Values["id"].(string)
				out[i][id]++
			}
		}
	}
	return out
}

// sumOf adds up units.
func sumOf(units []int64) int64 {
	var s int64
	for _, u := range units {
		s += u
	}
	return s
}

// hotPayments records what was paid to the merchant.
type hotPayments struct {
	mu        sync.Mutex
	credits   map[string]int64 // plain credits answered applied: id -> units
	lane      map[string]int   // their lanes, as answered
	transfers map[string]int64 // transfers sent: id -> units
	payer     map[string]string
	status    map[string]string // transfers' final statuses
}

func newHotPayments() *hotPayments {
	return &hotPayments{credits: map[string]int64{}, lane: map[string]int{}, transfers: map[string]int64{},
		payer: map[string]string{}, status: map[string]string{}}
}

// TestFaults_HotMerchantMasterKilled: payers pay a hot merchant of 6 lanes
// (one-payer transfers) and credits come in beside, while a hot sweeper
// runs. A master holding some of the lanes (not lane 0) is killed, and its
// replica kept from taking over until the other lanes have taken credits
// while it is down and a credit to one of its lanes has been answered
// UNAVAILABLE; then the replica takes over and the old master comes back.
// Afterwards every credit answered applied and every committed transfer is
// in the merchant's lanes once (an event on the lane its id picks), an
// aborted one not at all, the payers paid exactly the committed transfers,
// and the sweep, which went on through the kill, has emptied every lane
// into lane 0, each sweep transfer's take and give once.
func TestFaults_HotMerchantMasterKilled(t *testing.T) {
	needFaults(t)
	r := newHotRig(t, clustertest.Options{Masters: 3, Replicas: 1, ExtraConfig: []string{"cluster-require-full-coverage no"}},
		&engine.Options{MinReplicaAcks: 1, ReplicaAckTimeout: 500 * time.Millisecond, TransferTimeout: 2 * time.Second}, 6)
	ctx := context.Background()
	masters := r.masters(t)
	victim := ""
	for _, m := range masters[1:] {
		if m != masters[0] {
			victim = m
			break
		}
	}
	require.NotEmpty(t, victim, "every lane is on lane 0's master")
	onVictim := map[int]bool{}
	for lane, m := range masters {
		onVictim[lane] = m == victim
	}
	t.Logf("lanes' masters %v; killing %s", masters, victim)

	var payers []string
	for i := range 12 {
		p := fmt.Sprintf("payer%02d-%s", i, newID("p"))
		_, err := applyRetrying(ctx, r.eng, instructions.New("open-"+p, p).Open().Credit("CNY", "1000.00"))
		require.NoError(t, err)
		payers = append(payers, p)
	}

	sw := engine.NewHotSweeper(r.eng, 100*time.Millisecond, nil)
	swCtx, swStop := context.WithCancel(ctx)
	swDone := make(chan struct{})
	go func() { _ = sw.Run(swCtx); close(swDone) }()
	defer func() { swStop(); <-swDone }()

	led := newHotPayments()
	var (
		stop        atomic.Bool
		down        atomic.Bool
		whileDown   atomic.Int64 // credits and transfers to other lanes answered while the master was down
		refusedDown atomic.Int64 // answers UNAVAILABLE for its lanes meanwhile
		afterUp     atomic.Int64 // answered on its lanes once its replica took over
		up          atomic.Bool
		wg          sync.WaitGroup
		leftCredits = make(chan instructions.Instruction, 100000)
		leftXfers   = make(chan instructions.Transfer, 100000)
	)
	answered := func(lane int) {
		switch {
		case down.Load() && !onVictim[lane]:
			whileDown.Add(1)
		case up.Load() && onVictim[lane]:
			afterUp.Add(1)
		}
	}
	for w := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for n := 0; !stop.Load(); n++ {
				payer := payers[2*w+n%2]
				units := int64(1 + rng.IntN(500))
				amt := instructions.FromUnits(units, 2)
				id := fmt.Sprintf("t%d-%d-%s", w, n, newID("x"))
				tr := instructions.Transfer{ID: id, Parts: []instructions.Part{
					part(payer, ops().Debit("CNY", amt)), part(r.h, ops().Credit("CNY", amt))}}
				led.mu.Lock()
				led.transfers[id], led.payer[id] = units, payer
				led.mu.Unlock()
				// Three tries, then left for later (and for recovery):
				// the worker goes on paying.
				done := false
				for range 3 {
					tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
					st, err := r.eng.Transfer(tctx, tr)
					cancel()
					if err == nil && st.Complete {
						if st.Status == engine.TransferCommitted {
							answered(engine.LaneOf(id, r.lanes))
						}
						done = true
						break
					}
					if err != nil && !errors.Is(err, engine.ErrUnavailable) {
						t.Errorf("transfer %s: %v", id, err)
						done = true
						break
					}
					if down.Load() && onVictim[engine.LaneOf(id, r.lanes)] {
						refusedDown.Add(1)
					}
					time.Sleep(50 * time.Millisecond)
				}
				if !done {
					leftXfers <- tr
				}
			}
		})
	}
	for w := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w+100), uint64(time.Now().UnixNano())))
			for n := 0; !stop.Load(); n++ {
				units := int64(1 + rng.IntN(500))
				in := instructions.New(fmt.Sprintf("c%d-%d-%s", w, n, newID("c")), r.h).Credit("CNY", instructions.FromUnits(units, 2))
				if !r.credit(t, led, in, 3) {
					if down.Load() && onVictim[engine.LaneOf(in.ID, r.lanes)] {
						refusedDown.Add(1)
					}
					leftCredits <- in
					continue
				}
				answered(led.laneOf(in.ID))
			}
		})
	}

	time.Sleep(2 * time.Second)
	// Freeze the replica, then kill the master: nothing takes over.
	replica := replicaOf(t, victim)
	rp := processID(t, replica)
	require.NoError(t, syscall.Kill(rp, syscall.SIGSTOP))
	resumed := false
	defer func() {
		if !resumed {
			_ = syscall.Kill(rp, syscall.SIGCONT)
		}
	}()
	require.NoError(t, r.c.Kill(victim))
	down.Store(true)
	require.Eventually(t, func() bool { return whileDown.Load() >= 30 && refusedDown.Load() > 0 }, 3*time.Minute, 20*time.Millisecond,
		"while the master is down: %d answers on the other lanes, %d UNAVAILABLE on its own", whileDown.Load(), refusedDown.Load())
	down.Store(false)
	require.NoError(t, syscall.Kill(rp, syscall.SIGCONT))
	resumed = true
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	newMaster, err := r.c.WaitFailover(wctx, victim)
	cancel()
	require.NoError(t, err)
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	require.NoError(t, r.c.Restart(rctx, victim)) // a replica again, for MinReplicaAcks
	cancel()
	up.Store(true)
	require.Eventually(t, func() bool { return afterUp.Load() >= 10 }, 3*time.Minute, 20*time.Millisecond,
		"the lanes of the killed master take credits again under %s", newMaster)
	stop.Store(true)
	wg.Wait()
	t.Logf("while down: %d answers on the other lanes, %d UNAVAILABLE on its lanes; %d on its lanes after the failover to %s",
		whileDown.Load(), refusedDown.Load(), afterUp.Load(), newMaster)

	// Whatever was left is sent again, verbatim, until it has an answer;
	// recovery takes care of what its drivers left.
	close(leftCredits)
	close(leftXfers)
	for in := range leftCredits {
		require.True(t, r.credit(t, led, in, 2000), "credit %s never answered", in.ID)
	}
	rec := engine.NewRecovery(r.eng, &engine.RecoveryOptions{Interval: 200 * time.Millisecond})
	recCtx, recStop := context.WithCancel(ctx)
	recDone := make(chan struct{})
	go func() { _ = rec.Run(recCtx); close(recDone) }()
	defer func() { recStop(); <-recDone }()
	for tr := range leftXfers {
		require.Eventually(t, func() bool {
			tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			st, err := r.eng.Transfer(tctx, tr)
			return err == nil && st.Complete
		}, 3*time.Minute, 100*time.Millisecond, "transfer %s never complete", tr.ID)
	}
	statuses := map[string]int{}
	var committed int64
	paid := map[string]int64{}
	for id, units := range led.transfers {
		st, err := r.eng.GetTransfer(ctx, id)
		require.NoError(t, err, id)
		require.True(t, st.Complete, id)
		led.status[id] = st.Status
		statuses[st.Status]++
		if st.Status == engine.TransferCommitted {
			committed += units
			paid[led.payer[id]] += units
		}
	}
	want := committed + sumOf(slices.Collect(maps.Values(led.credits)))
	t.Logf("%d credits, %d transfers %v; recovery %+v", len(led.credits), len(led.transfers), statuses, rec.Stats())
	assert.Positive(t, statuses[engine.TransferCommitted])

	// The sweep goes on until every lane is in lane 0.
	require.Eventually(t, func() bool {
		u := r.laneUnits(t)
		return sumOf(u[1:]) == 0 && u[0] == want
	}, 3*time.Minute, 100*time.Millisecond, "the sweep empties the lanes into lane 0: lanes %v, want %d in lane 0", r.laneUnits(t), want)
	swStop()
	<-swDone
	t.Logf("sweeper %+v", sw.Stats())
	assert.Positive(t, sw.Stats().Moved)
	assert.Zero(t, sw.Stats().Missing)

	st, err := r.eng.State(ctx, r.h)
	require.NoError(t, err)
	assert.Equal(t, instructions.FromUnits(want, 2), st.Balances["CNY"].Available, "the merchant has what was paid")
	for _, p := range payers {
		ps, err := r.eng.State(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, instructions.FromUnits(100000-paid[p], 2), ps.Balances["CNY"].Available, "payer %s paid its committed transfers", p)
	}

	// Transfer by transfer, credit by credit, sweep by sweep.
	evs := r.events(t)
	count := func(id string) (n int, lanes []int) {
		for lane, m := range evs {
			if m[id] > 0 {
				n += m[id]
				lanes = append(lanes, lane)
			}
		}
		return n, lanes
	}
	for id, status := range led.status {
		n, lanes := count(instructions.TransferHoldPrefix + id + ":c")
		if status == engine.TransferCommitted {
			assert.Equal(t, 1, n, "committed transfer %s credited once", id)
			assert.Equal(t, []int{engine.LaneOf(id, r.lanes)}, lanes, "transfer %s on the lane its id picks", id)
		} else {
			assert.Zero(t, n, "aborted transfer %s credited", id)
		}
	}
	for id := range led.credits {
		n, lanes := count(id)
		assert.Equal(t, 1, n, "credit %s applied once", id)
		assert.Equal(t, []int{led.lane[id]}, lanes, "credit %s on the lane it was answered from", id)
	}
	sweeps := 0
	for lane := 1; lane < r.lanes; lane++ {
		for id, n := range evs[lane] {
			if !strings.HasPrefix(id, instructions.TransferHoldPrefix+instructions.HotSweepPrefix) {
				continue
			}
			sweeps++
			assert.Equal(t, 1, n, "sweep %s takes from lane %d once", id, lane)
			assert.Equal(t, 1, evs[0][id], "sweep %s gives to lane 0 once", id)
		}
	}
	t.Logf("%d sweep transfers", sweeps)
}

// credit applies in, sent again verbatim while it is answered UNAVAILABLE,
// at most tries times; it reports whether it has an answer, and records it.
func (r *hotRig) credit(t *testing.T, led *hotPayments, in instructions.Instruction, tries int) bool {
	units, _ := instructions.ToUnits(string(in.Ops[0].Amount), 2)
	for range tries {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		res, err := r.eng.Apply(ctx, in)
		cancel()
		if err == nil {
			led.mu.Lock()
			led.credits[in.ID], led.lane[in.ID] = units, res.Lane
			led.mu.Unlock()
			return true
		}
		if !errors.Is(err, engine.ErrUnavailable) {
			t.Errorf("credit %s: %v", in.ID, err)
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func (led *hotPayments) laneOf(id string) int {
	led.mu.Lock()
	defer led.mu.Unlock()
	return led.lane[id]
}

// TestFaults_HotLaneLostWithItsMaster: a master without replica restarts
// empty, and the lanes it held with it. The sweep sweeps the others and
// names the lost ones (HotSwept.Missing, the sweeper's count); the holder's
// state is UNAVAILABLE naming the first; a credit routed to a lost lane is
// UNAVAILABLE too, while credits to the other lanes apply.
func TestFaults_HotLaneLostWithItsMaster(t *testing.T) {
	needFaults(t)
	r := newHotRig(t, clustertest.Options{Masters: 3}, nil, 6)
	ctx := context.Background()
	for i := range 60 {
		_, err := r.eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), r.h).Credit("CNY", "1.00"))
		require.NoError(t, err)
	}
	masters := r.masters(t)
	// The set of hot holders, which the sweeper reads, is one key on one
	// master: lost with it, the sweeper knows no hot holder (see below).
	setMaster, err := r.c.MasterOf(ctx, cluster.Slot(cluster.HotHolders()))
	require.NoError(t, err)
	victim := ""
	for _, m := range masters[1:] {
		if m != masters[0] && (victim == "" || victim == setMaster) {
			victim = m
		}
	}
	require.NotEmpty(t, victim, "every lane is on lane 0's master")
	var lost []string
	first := -1
	for lane, m := range masters {
		if m == victim {
			lost = append(lost, instructions.LaneHolder(r.h, lane))
			if first < 0 {
				first = lane
			}
		}
	}
	before := r.laneUnits(t)
	require.NoError(t, r.c.Kill(victim))
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	require.NoError(t, r.c.Restart(rctx, victim))
	require.NoError(t, r.c.WaitReady(rctx))
	cancel()
	require.NoError(t, r.eng.Load(ctx))

	_, err = r.eng.State(ctx, r.h)
	require.ErrorIs(t, err, engine.ErrUnavailable)
	assert.Contains(t, err.Error(), fmt.Sprintf("lane %d of hot holder %s (%s) is missing", first, r.h, lost[0]))

	got, err := r.eng.SweepHot(ctx, r.h)
	require.NoError(t, err)
	assert.Equal(t, lost, got.Missing)
	kept := 0
	for lane := 1; lane < r.lanes; lane++ {
		if masters[lane] != victim && before[lane] > 0 {
			kept++
		}
	}
	assert.Equal(t, kept, got.Moved, "the lanes still there are swept")
	after := r.laneUnits(t)
	var stayed int64
	for lane := 1; lane < r.lanes; lane++ {
		if masters[lane] != victim {
			assert.Zero(t, after[lane], "lane %d swept", lane)
		} else {
			stayed += before[lane]
		}
	}
	assert.Equal(t, sumOf(before)-stayed, after[0], "lane 0 has what the other lanes had")

	if victim == setMaster {
		n, err := r.rdb.Exists(ctx, cluster.HotHolders()).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "the set of hot holders went with its master")
		t.Logf("the set of hot holders was on the master lost: written again, as a rebuild must")
		require.NoError(t, r.rdb.SAdd(ctx, cluster.HotHolders(), r.h).Err())
	}
	sw := engine.NewHotSweeper(r.eng, 10*time.Millisecond, nil)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = sw.Run(sctx); close(done) }()
	require.Eventually(t, func() bool { return sw.Stats().Passes > 0 }, time.Minute, 10*time.Millisecond)
	stop()
	<-done
	assert.Positive(t, sw.Stats().Missing, "the sweeper counts the lost lanes")

	// A payment whose id picks a lost lane is aborted, its payer unchanged.
	payer := ""
	for i := 0; payer == ""; i++ {
		p := "payer-" + strconv.Itoa(i) + "-" + r.h
		if m, err := r.c.MasterOf(ctx, cluster.HolderSlot(p)); err == nil && m != victim {
			payer = p
		}
	}
	_, err = r.eng.Apply(ctx, instructions.New("open", payer).Open().Credit("CNY", "10.00"))
	require.NoError(t, err)
	tid := ""
	for i := 0; tid == ""; i++ {
		if id := "pay-" + strconv.Itoa(i); masters[engine.LaneOf(id, r.lanes)] == victim {
			tid = id
		}
	}
	xst, err := r.eng.Transfer(ctx, instructions.Transfer{ID: tid, Parts: []instructions.Part{
		part(payer, ops().Debit("CNY", "4.00")), part(r.h, ops().Credit("CNY", "4.00"))}})
	require.NoError(t, err)
	t.Logf("a payment to lost lane %d: %s, %v", engine.LaneOf(tid, r.lanes), xst.Status, xst.Error)
	assert.Equal(t, engine.TransferAborted, xst.Status)
	require.NotNil(t, xst.Error)
	assert.Contains(t, xst.Error.Message, "lane "+strconv.Itoa(engine.LaneOf(tid, r.lanes))+" of hot holder "+r.h+" is missing")
	r.eng.Flush()
	ps, err := r.eng.State(ctx, payer)
	require.NoError(t, err)
	assert.Equal(t, "10.00", ps.Balances["CNY"].Available, "the payer keeps its money")

	for i := 0; i < 40; i++ {
		id := "after-" + strconv.Itoa(i)
		lane := engine.LaneOf(id, r.lanes)
		res, err := r.eng.Apply(ctx, instructions.New(id, r.h).Credit("CNY", "1.00"))
		if masters[lane] != victim {
			assert.NoError(t, err, "%s to lane %d", id, lane)
			assert.Equal(t, lane, res.Lane)
			continue
		}
		batch := r.eng.ApplyBatch(ctx, []instructions.Instruction{instructions.New(id, r.h).Credit("CNY", "1.00")})
		for _, err := range []error{err, batch[0].Err} {
			assert.ErrorIs(t, err, engine.ErrUnavailable, "%s to lost lane %d", id, lane)
			if err != nil {
				assert.Contains(t, err.Error(), fmt.Sprintf("lane %d of hot holder %s (%s) is missing", lane, r.h, instructions.LaneHolder(r.h, lane)))
			}
		}
	}
}

// TestHot_SweeperCancelledMidPass: a hot sweeper, and SweepHot called
// directly, are stopped at random points (their context cancelled, as a
// killed daemon stops them) round after round while credits come in. Once
// recovery has finished the transfers they left and a last sweep has run,
// every lane is empty, lane 0 holds every credit once, and each sweep
// transfer took from its lane once and gave to lane 0 once.
func TestHot_SweeperCancelledMidPass(t *testing.T) {
	needRedis(t)
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 2})
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(rdb, &engine.Options{TransferTimeout: 500 * time.Millisecond})
	r := &hotRig{c: c, rdb: rdb, eng: e, h: newID("merchant"), lanes: 8}
	ctx := context.Background()
	_, err := e.Apply(ctx, instructions.New("open", r.h).OpenHot(r.lanes))
	require.NoError(t, err)

	led := newHotPayments()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				in := instructions.New(fmt.Sprintf("c%d-%d", w, n), r.h).Credit("CNY", instructions.FromUnits(int64(1+n%97), 2))
				assert.True(t, r.credit(t, led, in, 1000))
			}
		})
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for round := range 16 {
		rctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Duration(rng.IntN(60000))*time.Microsecond, cancel)
		if round%2 == 0 {
			sw := engine.NewHotSweeper(e, 10*time.Millisecond, nil)
			_ = sw.Run(rctx)
		} else {
			_, _ = e.SweepHot(rctx, r.h)
		}
		cancel()
	}
	stop.Store(true)
	wg.Wait()

	want := sumOf(slices.Collect(maps.Values(led.credits)))
	rec := engine.NewRecovery(e, &engine.RecoveryOptions{Interval: 100 * time.Millisecond})
	require.Eventually(t, func() bool {
		_ = rec.Recover(ctx)
		_, err := e.SweepHot(ctx, r.h)
		u := r.laneUnits(t)
		return err == nil && sumOf(u[1:]) == 0 && u[0] == want
	}, 2*time.Minute, 50*time.Millisecond, "lanes %v, want %d in lane 0", r.laneUnits(t), want)
	t.Logf("%d credits; recovery %+v", len(led.credits), rec.Stats())

	st, err := e.State(ctx, r.h)
	require.NoError(t, err)
	assert.Equal(t, instructions.FromUnits(want, 2), st.Balances["CNY"].Available)
	evs := r.events(t)
	sweeps := 0
	for lane := 1; lane < r.lanes; lane++ {
		for id, n := range evs[lane] {
			if strings.HasPrefix(id, instructions.TransferHoldPrefix+instructions.HotSweepPrefix) {
				sweeps++
				assert.Equal(t, 1, n, "sweep %s takes from lane %d once", id, lane)
				assert.Equal(t, 1, evs[0][id], "sweep %s gives to lane 0 once", id)
			}
		}
	}
	given := 0
	for id := range evs[0] {
		if strings.HasPrefix(id, instructions.TransferHoldPrefix+instructions.HotSweepPrefix) {
			given++
		}
	}
	assert.Equal(t, sweeps, given, "lane 0 got nothing but what the lanes gave")
	for id := range led.credits {
		n := 0
		for _, m := range evs {
			n += m[id]
		}
		assert.Equal(t, 1, n, "credit %s once", id)
	}
	t.Logf("%d sweep transfers", sweeps)
}
