package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// hotTotal is the CNY a hot holder of n lanes holds, summed from the lanes'
// hashes (not through the engine).
func hotTotal(t *testing.T, h string, n int) int64 {
	t.Helper()
	var sum int64
	for _, m := range laneHashes(t, h, n) {
		v, _ := strconv.ParseInt(m[stored.PrefixBalance+"CNY"], 10, 64)
		sum += v
	}
	return sum
}

// lanesHolding are the lanes among n of h that keep a record of id.
func lanesHolding(t *testing.T, h, id string, n int) []int {
	t.Helper()
	var out []int
	for i := range n {
		k, err := rdb.Exists(context.Background(), cluster.Tx(instructions.LaneHolder(h, i), id)).Result()
		require.NoError(t, err)
		if k == 1 {
			out = append(out, i)
		}
	}
	return out
}

// hotRaw is the whole state of each of the first n lanes of h (readRaw:
// hash, events, expiry entries).
func hotRaw(t *testing.T, h string, n int) []rawState {
	t.Helper()
	out := make([]rawState, n)
	for i := range out {
		out[i] = readRaw(t, instructions.LaneHolder(h, i))
	}
	return out
}

// TestHot_ConcurrentRaisesAndCredits: four engines, three of which start
// with an empty lane cache or a count that goes stale, credit one hot holder
// while two of them raise its lanes again and again. Every credit lands
// once, on one lane, every lane ends with the final count, and the holder's
// sum is what was credited; every id sent again from a new engine replays.
func TestHot_ConcurrentRaisesAndCredits(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	engines := []*engine.Engine{eng, engine.New(rdb, nil), engine.New(rdb, nil), engine.New(rdb, nil)}
	// Two of them learn the count of 2 first: it goes stale under them.
	for i, e := range engines[1:3] {
		_, err := e.Apply(ctx, instructions.New("warm-"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
		require.NoError(t, err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		ids    []string
		credit atomic.Int64
	)
	credit.Store(200)
	for w, e := range engines {
		wg.Go(func() {
			for i := range 40 {
				id := fmt.Sprintf("w%d-%d", w, i)
				res, err := e.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
				if !assert.NoError(t, err, id) {
					continue
				}
				assert.False(t, res.Replayed, id)
				assert.Equal(t, h, res.Holder)
				credit.Add(100)
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		})
	}
	for r, e := range engines[:2] {
		wg.Go(func() {
			for _, n := range []int{3, 4, 6, 8, 12} {
				_, err := e.Apply(ctx, instructions.New(fmt.Sprintf("raise%d-%d", r, n), h).SetLanes(n))
				// The other raiser may have gone further: a lower count is refused.
				if err != nil {
					assert.ErrorIs(t, err, engine.ErrInvalidInstruction, "raise to %d", n)
				}
			}
		})
	}
	wg.Wait()
	for i, m := range laneHashes(t, h, 12) {
		assert.Equal(t, "12", m[stored.FieldLanes], "lane %d", i)
	}
	assert.Equal(t, instructions.FromUnits(credit.Load(), 2), state(t, h).Balances["CNY"].Available)
	assert.Equal(t, credit.Load(), hotTotal(t, h, 12))
	fresh := engine.New(rdb, nil)
	for _, id := range ids {
		assert.Len(t, lanesHolding(t, h, id, 12), 1, "%s is on one lane", id)
		res, err := fresh.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		assert.True(t, res.Replayed, "%s replays", id)
	}
	assert.Equal(t, credit.Load(), hotTotal(t, h, 12), "the replays changed nothing")
}

// TestHot_RetriesOfOneCreditAcrossARaise: 16 goroutines send the same credit
// at once, through engines that know the old count, the new one or none,
// while another raises the lanes: it lands once, on one lane.
func TestHot_RetriesOfOneCreditAcrossARaise(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	for round := range 6 {
		h := newHot(t, 2)
		stale := engine.New(rdb, nil)
		_, err := stale.Apply(ctx, instructions.New("warm", h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		engines := []*engine.Engine{stale, eng, engine.New(rdb, nil)}
		var (
			wg      sync.WaitGroup
			applied atomic.Int64
			lanes   sync.Map
		)
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			_, err := engine.New(rdb, nil).Apply(ctx, instructions.New("raise", h).SetLanes(2+4*(round%3+1)))
			assert.NoError(t, err)
		})
		for g := range 16 {
			wg.Go(func() {
				<-start
				res, err := engines[g%len(engines)].Apply(ctx, instructions.New("pay-1", h).Credit("CNY", "7.00"))
				if !assert.NoError(t, err) {
					return
				}
				if !res.Replayed {
					applied.Add(1)
				}
				lanes.Store(res.Lane, true)
			})
		}
		close(start)
		wg.Wait()
		n := 2 + 4*(round%3+1)
		assert.Equal(t, int64(1), applied.Load(), "round %d: one answer applied, the others replayed", round)
		assert.Len(t, lanesHolding(t, h, "pay-1", n), 1, "round %d", round)
		seen := 0
		lanes.Range(func(any, any) bool { seen++; return true })
		assert.Equal(t, 1, seen, "round %d: every answer names the same lane", round)
		if !assert.Equal(t, int64(800), hotTotal(t, h, n), "round %d", round) {
			for i := range n {
				for _, ev := range readRaw(t, instructions.LaneHolder(h, i)).Events {
					t.Logf("lane %d: %v seq %v ts %v", i, ev["id"], ev["seq"], ev["ts"])
				}
			}
			t.Logf("lane 0: %v", laneHashes(t, h, 1)[0])
		}
	}
}

// holdHook holds back the first command of a client that match accepts
// until release is closed, and closes hit when it holds it.
type holdHook struct {
	match   func(args []any) bool
	once    sync.Once
	hit     chan struct{}
	release chan struct{}
}

func newHoldHook(match func(args []any) bool) *holdHook {
	return &holdHook{match: match, hit: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdHook) hold(cmds ...redis.Cmder) {
	for _, c := range cmds {
		if h.match(c.Args()) {
			h.once.Do(func() { close(h.hit); <-h.release })
		}
	}
}

func (h *holdHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.hold(cmd); return next(ctx, cmd) }
}

func (h *holdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.hold(cmds...); return next(ctx, cmds) }
}

// applyCall tells whether args are an FCALL of apply on holder's hash for
// instruction id, and gives its route.
func applyCall(args []any, holder, id string) (route string, ok bool) {
	const argv = 3 + 4 // "fcall", "apply", numkeys, 4 keys
	if len(args) <= argv+libcall.Route || fmt.Sprint(args[0]) != "fcall" || fmt.Sprint(args[1]) != lua.FuncApply ||
		fmt.Sprint(args[3]) != cluster.Holder(holder) || fmt.Sprint(args[argv+libcall.ID]) != id {
		return "", false
	}
	return fmt.Sprint(args[argv+libcall.Route]), true
}

// TestHot_LaneAheadOfLane0AppliesOnce: a raise has reached the lanes and not
// yet lane 0. An engine that knew the old count sends a credit, is refused
// by its lane (ahead), reads lane 0 (not raised yet) and sends it again;
// that send is held back while the raise completes and a new engine sends
// the same id by the new count. The credit lands once, and both answers
// name the same lane.
func TestHot_LaneAheadOfLane0AppliesOnce(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	id := ""
	for i := 0; id == ""; i++ {
		if c := "race-" + strconv.Itoa(i); engine.LaneOf(c, 2) == 1 && engine.LaneOf(c, 8) >= 2 {
			id = c
		}
	}
	client := func(hook *holdHook) *engine.Engine {
		c := testCluster.Client(nil)
		t.Cleanup(func() { _ = c.Close() })
		c.AddHook(hook)
		return engine.New(c, nil)
	}
	// A holds back its second send of the credit, whatever lane it goes to.
	sends := 0
	var mu sync.Mutex
	aHook := newHoldHook(func(args []any) bool {
		for lane := range 8 {
			if _, ok := applyCall(args, instructions.LaneHolder(h, lane), id); ok {
				mu.Lock()
				defer mu.Unlock()
				sends++
				return sends == 2
			}
		}
		return false
	})
	a := client(aHook)
	_, err := a.Apply(ctx, instructions.New("warm", h).Credit("CNY", "1.00")) // a learns the count of 2
	require.NoError(t, err)
	// R's raise stops before lane 0.
	rHook := newHoldHook(func(args []any) bool { _, ok := applyCall(args, h, "raise"); return ok })
	r := client(rHook)

	raised := make(chan error, 1)
	go func() { _, err := r.Apply(ctx, instructions.New("raise", h).SetLanes(8)); raised <- err }()
	<-rHook.hit
	type answer struct {
		res instructions.Result
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := a.Apply(ctx, instructions.New(id, h).Credit("CNY", "5.00"))
		first <- answer{res, err}
	}()
	select {
	case <-aHook.hit:
	case got := <-first: // a placed it without a second send
		require.NoError(t, got.err)
	}
	close(rHook.release)
	require.NoError(t, <-raised)
	b, err := engine.New(rdb, nil).Apply(ctx, instructions.New(id, h).Credit("CNY", "5.00"))
	require.NoError(t, err)
	close(aHook.release)
	got := <-first
	require.NoError(t, got.err)
	assert.Equal(t, []bool{false, true}, []bool{got.res.Replayed && b.Replayed, got.res.Replayed || b.Replayed}, "one applied, one replayed")
	assert.Equal(t, got.res.Lane, b.Lane, "both answers name the same lane")
	assert.Len(t, lanesHolding(t, h, id, 8), 1)
	assert.Equal(t, int64(600), hotTotal(t, h, 8), "1.00 warm + 5.00 once")
}

// TestHot_JSONDoorCreditThenEngine: the JSON door cannot route, so it
// refuses a hot holder a credit, writing and recording nothing; the same id
// then goes through the engine to its lane and applies once, whether that
// lane is 0 or another.
func TestHot_JSONDoorCreditThenEngine(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	h := newHot(t, 4)
	var onZero, elsewhere string
	for i := 0; onZero == "" || elsewhere == ""; i++ {
		id := "door-" + strconv.Itoa(i)
		switch {
		case engine.LaneOf(id, 4) == 0 && onZero == "":
			onZero = id
		case engine.LaneOf(id, 4) != 0 && elsewhere == "":
			elsewhere = id
		}
	}
	before := laneHashes(t, h, 4)
	for _, id := range []string{onZero, elsewhere} {
		text := `{"id":"` + id + `","holder":"` + h + `","ops":[{"op":"credit","asset":"CNY","amount":"300"}]}`
		out := fcallJSON(t, h, id, text)
		require.Equal(t, "INVALID_INSTRUCTION", cliCode(out), out)
	}
	assert.Equal(t, before, laneHashes(t, h, 4), "nothing written")
	for _, id := range []string{onZero, elsewhere} {
		res, err := eng.Apply(ctx, instructions.New(id, h).Credit("CNY", "3.00"))
		require.NoError(t, err, id)
		assert.False(t, res.Replayed)
		assert.Equal(t, []int{engine.LaneOf(id, 4)}, lanesHolding(t, h, id, 4), "%s applied once, on its lane", id)
	}
	assert.Equal(t, "6.00", state(t, h).Balances["CNY"].Available)
}

// TestHot_LaneNamesRefusedFromClients: a lane's name (with #) is no
// client's: Apply, ApplyBatch, a transfer's part, State, SweepHot and the
// JSON door refuse it INVALID_ID, and nothing of the lane changes. A
// transfer id beginning with hot- (the sweep's) is refused too.
func TestHot_LaneNamesRefusedFromClients(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	_, err := eng.Apply(ctx, instructions.New("c1", h).Credit("CNY", "4.00"))
	require.NoError(t, err)
	payer := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "50.00") })
	before := hotRaw(t, h, 3)
	payerBefore := readRaw(t, payer)
	lane := instructions.LaneHolder(h, 1)
	for _, name := range []string{lane, h + "#0", h + "#", "#1"} {
		_, err := eng.Apply(ctx, instructions.New("x", name).Credit("CNY", "1.00"))
		assert.ErrorIs(t, err, engine.ErrInvalidID, "apply to %s", name)
		_, err = eng.Apply(ctx, instructions.New("x", name).Debit("CNY", "1.00"))
		assert.ErrorIs(t, err, engine.ErrInvalidID, "debit of %s", name)
		out := eng.ApplyBatch(ctx, []instructions.Instruction{instructions.New("x", name).Credit("CNY", "1.00")})
		assert.ErrorIs(t, out[0].Err, engine.ErrInvalidID, "batch to %s", name)
		_, err = eng.Apply(ctx, instructions.New("x", h).Credit("CNY", "1.00").WithCounterparty(name))
		assert.ErrorIs(t, err, engine.ErrInvalidID, "counterparty %s", name)
		for _, parts := range [][]instructions.Part{
			{part(payer, ops().Debit("CNY", "1.00")), part(name, ops().Credit("CNY", "1.00"))},
			{part(name, ops().Debit("CNY", "1.00")), part(payer, ops().Credit("CNY", "1.00"))},
		} {
			_, err = eng.Transfer(ctx, instructions.Transfer{ID: newID("t"), Parts: parts})
			assert.ErrorIs(t, err, engine.ErrInvalidID, "transfer part %s", name)
		}
		_, err = eng.State(ctx, name)
		assert.ErrorIs(t, err, engine.ErrInvalidID, "state of %s", name)
		_, err = eng.SweepHot(ctx, name)
		assert.ErrorIs(t, err, engine.ErrInvalidID, "sweep of %s", name)
	}
	// The JSON door, on the lane's own keys and on the parent's.
	for _, text := range []string{
		`{"id":"x","holder":"` + lane + `","ops":[{"op":"credit","asset":"CNY","amount":"1.00"}]}`,
		`{"id":"x","holder":"` + lane + `","ops":[{"op":"debit","asset":"CNY","amount":"1.00"}]}`,
		`{"id":"x","holder":"` + lane + `","ops":[{"op":"set_lanes","lanes":8}]}`,
	} {
		out := fcallJSON(t, lane, "x", text)
		assert.Equal(t, "INVALID_ID", cliCode(out), text)
	}
	out := fcallJSON(t, h, "x", `{"id":"x","holder":"`+h+`","counterparty":"`+lane+`","ops":[{"op":"credit","asset":"CNY","amount":"1.00"}]}`)
	assert.Equal(t, "INVALID_ID", cliCode(out))
	// The sweep's transfer ids.
	for _, id := range []string{"hot-x", engine.HotSweepID(h, 1, 1)} {
		_, err = eng.Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
			part(payer, ops().Debit("CNY", "1.00")), part(h, ops().Credit("CNY", "1.00"))}})
		assert.ErrorIs(t, err, engine.ErrInvalidID, id)
		_, err = eng.GetTransfer(ctx, id)
		assert.ErrorIs(t, err, engine.ErrTransferNotFound, "%s: nothing written", id)
	}
	eng.Flush()
	assert.Equal(t, before, hotRaw(t, h, 3), "no lane changed")
	assert.Equal(t, payerBefore, readRaw(t, payer), "the payer did not change")
	for _, name := range []string{lane, h + "#0", h + "#", "#1"} {
		n, err := rdb.Exists(ctx, cluster.Tx(name, "x")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "no record under %s", name)
	}
}

// TestHot_SetLanesRefusalsChangeNoLane: every refused set_lanes (lowered,
// out of range, on a suspended holder, on an unknown one) and an open of a
// holder that exists leave the whole state of every lane as it was, the
// lanes a raise would open included; an equal count changes lane 0 only.
func TestHot_SetLanesRefusalsChangeNoLane(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	for i := range 8 {
		_, err := eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "2.00"))
		require.NoError(t, err)
	}
	refuse := func(in instructions.Instruction, code error) {
		t.Helper()
		before := hotRaw(t, h, 10)
		_, err := eng.Apply(ctx, in)
		assert.ErrorIs(t, err, code, "%+v", in.Ops)
		assert.Equal(t, before, hotRaw(t, h, 10), "%+v: no lane changed", in.Ops)
	}
	refuse(instructions.New("low", h).SetLanes(3), engine.ErrInvalidInstruction)
	refuse(instructions.New("one", h).SetLanes(1), engine.ErrInvalidInstruction)
	refuse(instructions.New("big", h).SetLanes(65), engine.ErrInvalidInstruction)
	refuse(instructions.New("reopen", h).OpenHot(10), engine.ErrHolderExists)
	refuse(instructions.New("reopen-plain", h).Open(), engine.ErrHolderExists)

	before := hotRaw(t, h, 10)
	_, err := eng.Apply(ctx, instructions.New("same", h).SetLanes(4))
	require.NoError(t, err)
	after := hotRaw(t, h, 10)
	assert.Equal(t, before[1:], after[1:], "an equal count changes no other lane")
	assert.Equal(t, before[0].Hashes[hMeta][stored.FieldLanes], after[0].Hashes[hMeta][stored.FieldLanes])
	assert.Len(t, after[0].Events, len(before[0].Events)+1, "an applied instruction on lane 0")

	_, err = eng.Apply(ctx, instructions.New("s", h).Suspend())
	require.NoError(t, err)
	refuse(instructions.New("up", h).SetLanes(10), engine.ErrHolderSuspended)

	ghost := newID("ghost")
	_, err = eng.Apply(ctx, instructions.New("up", ghost).SetLanes(6))
	assert.ErrorIs(t, err, engine.ErrHolderNotFound)
	for i := range 6 {
		assert.Equal(t, rawState{Hashes: splitHolderHash(map[string]string{}), Expiry: map[string]float64{}},
			readRaw(t, instructions.LaneHolder(ghost, i)), "lane %d of an unknown holder", i)
	}
}

// TestHot_RefusedRaiseLeavesLanesAhead: a set_lanes that lane 0 refuses for
// another op of its instruction (a debit beyond its funds) comes after the
// engine raised the lanes: lane 0 is unchanged, the lanes stay ahead of it.
// Credits from then on, from an engine that knew the count, one that did not
// and one that raised, land once each and all of them count in the
// holder's state: lane 0's count still decides which lanes are read.
func TestHot_RefusedRaiseLeavesLanesAhead(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	stale := engine.New(rdb, nil)
	_, err := stale.Apply(ctx, instructions.New("warm", h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	before := hotRaw(t, h, 1)
	_, err = eng.Apply(ctx, instructions.New("up", h).SetLanes(6).Debit("CNY", "500.00"))
	require.ErrorIs(t, err, engine.ErrInsufficientFunds)
	after := hotRaw(t, h, 1)
	assert.Equal(t, before[0].Hashes, after[0].Hashes, "lane 0 unchanged")
	assert.Equal(t, before[0].Events, after[0].Events, "no event on lane 0")
	ahead := laneHashes(t, h, 6)
	assert.Equal(t, "6", ahead[1][stored.FieldLanes], "the raise reached the lanes before lane 0 refused it")

	engines := []*engine.Engine{stale, engine.New(rdb, nil), eng}
	for i := range 60 {
		id := "after-" + strconv.Itoa(i)
		res, err := engines[i%3].Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err, id)
		assert.Less(t, res.Lane, 3, "%s on one of lane 0's 3 lanes", id)
		again, err := engines[(i+1)%3].Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err, id)
		assert.True(t, again.Replayed, id)
		assert.Len(t, lanesHolding(t, h, id, 6), 1, id)
	}
	assert.Equal(t, "61.00", state(t, h).Balances["CNY"].Available, "every credit counts")
	assert.Equal(t, int64(6100), hotTotal(t, h, 3))
}

// raiseHook raises a holder's lanes by one each time its client sends the
// credit id routed by a count, before the send, the first times times.
type raiseHook struct {
	t        *testing.T
	h, id    string
	count    int
	times    int
	raised   int
	routedBy []string
	holdHook // only its pass-through DialHook
	mu       sync.Mutex
}

func (r *raiseHook) raise(cmds ...redis.Cmder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cmds {
		for lane := range r.count {
			route, ok := applyCall(c.Args(), instructions.LaneHolder(r.h, lane), r.id)
			if !ok || route == "" || r.raised == r.times {
				continue
			}
			r.routedBy = append(r.routedBy, route)
			r.count++
			r.raised++
			_, err := eng.Apply(context.Background(), instructions.New("raise-"+strconv.Itoa(r.count), r.h).SetLanes(r.count))
			assert.NoError(r.t, err)
		}
	}
}

func (r *raiseHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.raise(cmd); return next(ctx, cmd) }
}

func (r *raiseHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.raise(cmds...); return next(ctx, cmds) }
}

// TestHot_CreditOutlastsRaises: each time an engine sends a credit routed
// by a count, the holder's lanes are raised before it lands, eight times
// over: every send is refused, and the engine routes it again by the count
// it then reads, until it lands once. LANES_CHANGED, the engine's own code,
// never reaches the caller (it did after four refusals).
func TestHot_CreditOutlastsRaises(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	hook := &raiseHook{t: t, h: h, id: "pay", count: 2, times: 8}
	c := testCluster.Client(nil)
	t.Cleanup(func() { _ = c.Close() })
	c.AddHook(hook)
	e := engine.New(c, nil)
	_, err := e.Apply(ctx, instructions.New("warm", h).Credit("CNY", "1.00")) // learns the count of 2
	require.NoError(t, err)
	res, err := e.Apply(ctx, instructions.New("pay", h).Credit("CNY", "5.00"))
	require.NoError(t, err)
	assert.Equal(t, 8, hook.raised)
	t.Logf("routed by %v, then landed on lane %d of %d", hook.routedBy, res.Lane, hook.count)
	assert.Equal(t, engine.LaneOf("pay", 10), res.Lane)
	assert.Len(t, lanesHolding(t, h, "pay", 10), 1)
	assert.Equal(t, int64(600), hotTotal(t, h, 10))
}
