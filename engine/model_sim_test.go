package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

var (
	simSeed    = flag.Int64("seed", 0, "seed of TestModel_RandomInstructionsAgreeWithEngine; 0 takes one from the clock")
	simHolders = flag.Int("model.holders", 8, "holders TestModel_RandomInstructionsAgreeWithEngine drives at once")
	simSteps   = flag.Int("model.steps", 2500, "instructions per holder in TestModel_RandomInstructionsAgreeWithEngine")
)

// Expiry is judged by the Redis server's clock (TIME), at an instant the
// client cannot know: somewhere between sending the instruction (t0) and
// reading the answer (t1). So for each instruction the driver evaluates the
// model at every server time that can make a difference in
// [t0-simMarginMs, t1+simMarginMs] (just before and just after each expiry of
// a hold or coupon falling in that window, or the middle of the window when
// none does) and accepts the engine's outcome if it is one of those. Outside
// the window the outcome is unique, so a hold that expired long ago must be
// HOLD_EXPIRED and one far from expiry must settle. The margin covers the
// millisecond rounding on both sides and a server clock a little off the
// client's (a cluster named by ATOMLEDGER_TEST_REDIS may run elsewhere); the
// price is that an engine judging expiry up to that much early or late passes.
// Holds get ttls of 20 ms .. 800 ms, so many of them expire during the run and
// a few instructions land inside a window. The expiry of a hold the
// instruction creates is now+ttl by the server's clock: it is checked against
// [t0+ttl, t1+ttl] widened by the margin, then adopted by the model.
//
// No hold-expiry sweeper runs on the cluster these tests share (the sweeper's
// own tests start a cluster of their own), so the model keeps an expired hold
// until a client releases it. With a sweeper running, an expired hold could
// vanish at any time and the model would have to allow for that.
const simMarginMs = 50

// In recorded steps the holder is one of these placeholders (or a literal, for
// an invalid holder id): each run substitutes fresh holder ids, so a failing
// sequence can be replayed on new holders.
const (
	simMain  = "HOLDER" // the holder the sequence is about
	simGhost = "GHOST"  // a holder that is never opened
)

type simStep struct {
	Kind  string
	In    instructions.Instruction
	Batch bool          // sent through ApplyBatch, as a batch of one
	JSON  bool          // encoded and decoded first, as the daemon receives it
	At    time.Duration // since the first step of the sequence
}

// TestModel_RandomInstructionsAgreeWithEngine drives random instruction
// sequences, valid and invalid, through the engine and through the model of
// the contract (model_test.go) at once, and compares every outcome (result
// or error code and op index, replayed flag) and the holder's whole state
// after every step. Holders run in parallel, each on its own sequence.
//
// On a disagreement it prints the seed, the holder and step, and a shrunk
// sequence that still disagrees on fresh holders. Rerun with -seed=N; the
// random choices then repeat, but the server's clock does not, so a sequence
// may take another path where a hold's expiry decided it.
func TestModel_RandomInstructionsAgreeWithEngine(t *testing.T) {
	needRedis(t)
	seed := *simSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -seed=%d)", seed, seed)
	ctx := context.Background()
	start := time.Now()

	var (
		mu      sync.Mutex
		tally   = map[string]int{}
		holders []string
		wg      sync.WaitGroup
		failed  atomic.Bool
	)
	for i := range *simHolders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newSimGen(seed, i)
			r := newSimRun()
			var steps []simStep
			first := time.Now()
			for s := range *simSteps {
				st := g.next(r.main)
				st.At = time.Since(first)
				steps = append(steps, st)
				if d := r.step(ctx, st); d != "" {
					failed.Store(true)
					t.Errorf("seed %d, holder %d, step %d (%s): %s\n%s", seed, i, s, st.Kind, d, simShrunk(ctx, steps))
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range r.tally {
				tally[k] += v
			}
			holders = append(holders, r.mainID, r.ghostID)
		}()
	}
	wg.Wait()
	for _, h := range holders {
		checkInvariants(t, h)
	}
	if failed.Load() {
		t.Logf("seed %d", seed)
	}
	var total int
	var outcomes, paths []string
	for _, k := range slices.Sorted(maps.Keys(tally)) {
		if p, ok := strings.CutPrefix(k, "~"); ok {
			paths = append(paths, fmt.Sprintf("%s: %d", p, tally[k]))
			continue
		}
		total += tally[k]
		outcomes = append(outcomes, fmt.Sprintf("%s=%d", k, tally[k]))
	}
	t.Logf("%d steps on %d holders in %v\noutcomes: %s\npaths taken (steps): %s", total, *simHolders,
		time.Since(start).Round(time.Millisecond), strings.Join(outcomes, " "), strings.Join(paths, "; "))
}

// simRun is one run of a sequence: the two holders it uses, in the engine
// and in the model.
type simRun struct {
	mainID, ghostID string
	main, ghost     *modelHolder
	tally           map[string]int
}

func newSimRun() *simRun {
	return &simRun{mainID: newID("mh"), ghostID: newID("mg"), main: newModelHolder(), ghost: newModelHolder(), tally: map[string]int{}}
}

// step sends one instruction to the engine and the model, then reads the
// holder's state; it returns "" when they agree, or what they disagree on.
func (r *simRun) step(ctx context.Context, st simStep) string {
	in := st.In
	mh, holder := r.main, r.mainID
	switch in.Holder {
	case simMain:
		in.Holder = r.mainID
	case simGhost:
		in.Holder, mh, holder = r.ghostID, r.ghost, r.ghostID
	}
	if st.JSON {
		b, err := instructions.Encode(in)
		if err != nil {
			return fmt.Sprintf("encode: %v", err)
		}
		dec, err := instructions.Decode(b)
		if err != nil {
			return fmt.Sprintf("decode of %s: %v", b, err)
		}
		if !reflect.DeepEqual(dec, in) {
			return fmt.Sprintf("decode of %s gives %#v", b, dec)
		}
		in = dec
	}
	n, want, decided := mh.before(in)
	t0 := time.Now().UnixMilli()
	var res instructions.Result
	var err error
	if st.Batch {
		o := eng.ApplyBatch(ctx, []instructions.Instruction{in})[0]
		res, err = o.Result, o.Err
	} else {
		res, err = eng.Apply(ctx, in)
	}
	t1 := time.Now().UnixMilli()
	var got *engine.Error
	if err != nil && !errors.As(err, &got) {
		return fmt.Sprintf("engine returned %T %v", err, err)
	}
	if decided {
		if d := simCompare(&want, res, got, t0, t1); d != "" {
			return d
		}
	} else {
		nows := simNows(mh.expiries(n), t0, t1)
		outs := make([]mOutcome, len(nows))
		accs := make([]*mAccounts, len(nows))
		seen := map[string]bool{}
		for i, now := range nows {
			outs[i], accs[i] = mh.eval(n, now)
			key := outs[i].res
			key.Holds = maps.Clone(key.Holds)
			for id := range outs[i].pending { // differs with now by construction
				key.Holds[id] = instructions.Hold{}
			}
			seen[fmt.Sprint(outs[i].code, outs[i].op, simJSON(key))] = true
		}
		if len(seen) > 1 {
			r.tally["~outcome depended on when the server read its clock"]++
		}
		var first string
		matched := false
		for i, out := range outs {
			acc := accs[i]
			d := simCompare(&out, res, got, t0, t1)
			if d == "" {
				for id := range out.pending {
					acc.holds[id].expires = out.res.Holds[id].ExpiresMs
				}
				mh.commit(n, out, acc)
				want, matched = out, true
				break
			}
			if first == "" {
				first = d
			}
		}
		if !matched {
			if len(nows) > 1 {
				first += fmt.Sprintf(" (at every server time that matters in [%d, %d])", t0-simMarginMs, t1+simMarginMs)
			}
			return first
		}
	}
	r.tally[simOutcomeName(want)]++
	if !want.replayed {
		for _, n := range want.notes {
			r.tally["~"+n]++
		}
	}
	return r.checkState(ctx, mh, holder)
}

// simNows are the server times at which to evaluate the model: see simMarginMs.
func simNows(expiries []int64, t0, t1 int64) []int64 {
	lo, hi := t0-simMarginMs, t1+simMarginMs
	nows := []int64{(t0 + t1) / 2}
	for _, e := range expiries {
		if e > 0 && e >= lo && e <= hi {
			nows = append(nows, e-1, e+1)
		}
	}
	slices.Sort(nows[1:])
	return slices.Compact(nows)
}

func simOutcomeName(o mOutcome) string {
	name := string(o.code)
	if name == "" {
		name = "ok"
	}
	if o.replayed {
		name = "replayed:" + name
	}
	return name
}

// simCompare compares the model's outcome with the engine's. For holds the
// instruction created with a ttl it checks the engine's expiry against the
// window of the call and copies it into want.
func simCompare(want *mOutcome, res instructions.Result, got *engine.Error, t0, t1 int64) string {
	if want.code != "" {
		w := fmt.Sprintf("%s op %d replayed=%v", want.code, want.op, want.replayed)
		if got == nil {
			return fmt.Sprintf("model: %s; engine: result %s", w, simJSON(simResult(res)))
		}
		if g := fmt.Sprintf("%s op %d replayed=%v", got.Code, got.OpIndex, got.Replayed); g != w {
			return fmt.Sprintf("model: %s; engine: %s (%s)", w, g, got.Message)
		}
		return ""
	}
	if got != nil {
		return fmt.Sprintf("model: result %s; engine: %s op %d replayed=%v (%s)",
			simJSON(simResult(want.res)), got.Code, got.OpIndex, got.Replayed, got.Message)
	}
	for id, ttl := range want.pending {
		if h, ok := res.Holds[id]; ok {
			if h.ExpiresMs < t0+ttl-simMarginMs || h.ExpiresMs > t1+ttl+simMarginMs {
				return fmt.Sprintf("hold %s created with ttl_ms %d expires at %d, want server now + ttl in [%d, %d]",
					id, ttl, h.ExpiresMs, t0+ttl, t1+ttl)
			}
			w := want.res.Holds[id]
			w.ExpiresMs = h.ExpiresMs
			want.res.Holds[id] = w
		}
	}
	if w, g := simResult(want.res), simResult(res); !reflect.DeepEqual(w, g) {
		return fmt.Sprintf("results differ\n  model:  %s\n  engine: %s", simJSON(w), simJSON(g))
	}
	return ""
}

func (r *simRun) checkState(ctx context.Context, mh *modelHolder, holder string) string {
	got, err := eng.State(ctx, holder)
	want, ok := mh.state(holder)
	switch {
	case !ok && errors.Is(err, engine.ErrHolderNotFound):
		return ""
	case !ok:
		return fmt.Sprintf("state: the holder must not exist; engine: %v %s", err, simJSON(simState(got)))
	case err != nil:
		return fmt.Sprintf("state: %v", err)
	}
	if w, g := simState(want), simState(got); !reflect.DeepEqual(w, g) {
		return fmt.Sprintf("states differ after the step\n  model:  %s\n  engine: %s", simJSON(w), simJSON(g))
	}
	return ""
}

// simResult and simState make two answers comparable: nil and empty are the
// same, and a hold's coupons are a set. In a state, an asset with nothing
// available and nothing frozen may be listed or not (contract silent: "the
// same shape with everything the holder has").
func simResult(r instructions.Result) instructions.Result {
	r.Balances = simOr(r.Balances)
	r.Coupons = simOr(r.Coupons)
	r.Holds = simHolds(r.Holds)
	return r
}

func simState(s instructions.State) instructions.State {
	b := map[string]instructions.Balance{}
	for a, v := range s.Balances {
		if !simZero(v.Available) || !simZero(v.Frozen) {
			b[a] = v
		}
	}
	s.Balances = b
	s.Coupons = simOr(s.Coupons)
	s.Holds = simHolds(s.Holds)
	return s
}

func simHolds(hs map[string]instructions.Hold) map[string]instructions.Hold {
	out := make(map[string]instructions.Hold, len(hs))
	for id, h := range hs {
		h.Legs = simOr(h.Legs)
		h.Coupons = slices.Sorted(slices.Values(h.Coupons))
		if h.Coupons == nil {
			h.Coupons = []string{}
		}
		out[id] = h
	}
	return out
}

func simOr[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

func simZero(s string) bool { return strings.Trim(s, "0.") == "" }

func simJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// simReplay runs steps on fresh holders: the index of the first step at which
// the engine and the model disagree and what on, or -1. Paced, it waits before
// each step until as long after the first as in the original run, so that the
// same holds have expired.
func simReplay(ctx context.Context, steps []simStep, paced bool) (int, string) {
	r := newSimRun()
	start := time.Now()
	for i, st := range steps {
		if paced {
			time.Sleep(time.Until(start.Add(st.At - steps[0].At)))
		}
		if d := r.step(ctx, st); d != "" {
			return i, d
		}
	}
	return -1, ""
}

// simShrunk looks for a shorter sequence that still disagrees (delta
// debugging: drop chunks of steps, halving the chunks when none can go),
// within a time budget, and writes it as JSON instructions.
func simShrunk(ctx context.Context, steps []simStep) string {
	const budget = 90 * time.Second
	deadline := time.Now().Add(budget)
	paced := false
	i, d := simReplay(ctx, steps, false)
	if i < 0 {
		paced = true
		if i, d = simReplay(ctx, steps, true); i < 0 {
			return fmt.Sprintf("the sequence (%d steps) agrees when replayed on fresh holders: timing-dependent; its last steps:\n%s",
				len(steps), simListing(steps[max(0, len(steps)-20):], true))
		}
	}
	cur := steps[:i+1]
	for n := 2; len(cur) >= 2 && time.Now().Before(deadline); {
		size := (len(cur) + n - 1) / n
		reduced := false
		for lo := 0; lo < len(cur) && time.Now().Before(deadline); lo += size {
			cand := slices.Concat(cur[:lo], cur[min(lo+size, len(cur)):])
			if j, dd := simReplay(ctx, cand, paced); j >= 0 {
				cur, d, reduced = cand[:j+1], dd, true
				n = max(n-1, 2)
				break
			}
		}
		if !reduced {
			if n >= len(cur) {
				break
			}
			n = min(2*n, len(cur))
		}
	}
	// Then drop single ops of the instructions left.
	for i := len(cur) - 1; i >= 0; i = min(i, len(cur)) - 1 {
		for j := len(cur[i].In.Ops) - 1; j >= 0 && i < len(cur); j-- {
			if len(cur[i].In.Ops) < 2 || time.Now().After(deadline) {
				break
			}
			cand := slices.Clone(cur)
			cand[i].In.Ops = slices.Delete(slices.Clone(cur[i].In.Ops), j, j+1)
			if k, dd := simReplay(ctx, cand, paced); k >= 0 {
				cur, d = cand[:k+1], dd
			}
		}
	}
	how := "replayed back to back"
	if paced {
		how = "replayed at the original pace (offsets in ms)"
	}
	return fmt.Sprintf("minimal failing sequence, %d of %d instructions, %s; %s and %s stand for fresh holders:\n%s  disagreement at its last step: %s",
		len(cur), len(steps), how, simMain, simGhost, simListing(cur, paced), d)
}

// simListing writes steps one a line: index, offset in ms (when paced),
// kind and path, and the instruction as JSON.
func simListing(steps []simStep, offsets bool) string {
	var b strings.Builder
	for i, st := range steps {
		fmt.Fprintf(&b, "  %3d ", i)
		if offsets {
			fmt.Fprintf(&b, "+%-6d ", (st.At - steps[0].At).Milliseconds())
		}
		kind := st.Kind
		if st.Batch {
			kind += ", batch"
		}
		if st.JSON {
			kind += ", via JSON"
		}
		js, _ := instructions.Encode(st.In)
		fmt.Fprintf(&b, "(%s) %s\n", kind, js)
	}
	return b.String()
}

// simGen makes the random steps of one holder. It looks at the model's state
// to aim its ops at holds, coupons and balances that exist, with amounts at
// the edges (all of it, one unit more, 2^53-1), and mixes in replays,
// conflicts, invalid instructions and instructions for a holder that does not
// exist.
type simGen struct {
	rng                 *rand.Rand
	whale               bool // amounts near 2^53-1 are common
	ids, holds, coupons int
	past                []instructions.Instruction // earlier instructions to the main holder
	assetsByWeight      []string
}

func newSimGen(seed int64, holder int) *simGen {
	return &simGen{
		rng:            rand.New(rand.NewPCG(uint64(seed), uint64(holder))),
		whale:          holder%4 == 3,
		assetsByWeight: []string{"CNY", "CNY", "CNY", "USDT", "USDT", "BTC", "BTC"},
	}
}

func (g *simGen) pct(p int) bool { return g.rng.IntN(100) < p }

func (g *simGen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

func (g *simGen) id() string { g.ids++; return simName("i", g.ids) }

// simName names the n-th instruction, hold or coupon, in every shape an id
// may take: letters and digits, digits only, with . : - _, 64 bytes long.
func simName(prefix string, n int) string {
	switch n % 5 {
	case 1:
		return fmt.Sprintf("%d", n)
	case 2:
		return fmt.Sprintf("%s:%d.a-b_c", prefix, n)
	case 3:
		s := fmt.Sprintf("%s%d-", prefix, n)
		return s + strings.Repeat("x", 64-len(s))
	}
	return fmt.Sprintf("%s%d", prefix, n)
}

func (g *simGen) asset() string { return g.pick(g.assetsByWeight) }

func (g *simGen) next(m *modelHolder) simStep {
	st := g.step(m.acc)
	st.Batch, st.JSON = g.pct(10), g.pct(20)
	if st.In.Holder != simGhost {
		g.past = append(g.past, st.In)
	}
	return st
}

func (g *simGen) step(a *mAccounts) simStep {
	in := instructions.New(g.id(), simMain)
	if a == nil { // not opened yet
		switch r := g.rng.IntN(100); {
		case r < 30:
			return simStep{Kind: "before open", In: g.fresh(in, nil, false)}
		case r < 45:
			u := 1 + g.rng.Int64N(10000)
			in.Ops = []instructions.Op{{Op: "open"}, g.amountOp("credit", "CNY", u), g.amountOp("debit", "CNY", u+1)}
			return simStep{Kind: "open then fail", In: in}
		default:
			in.Ops = []instructions.Op{{Op: "open"}}
			for range g.rng.IntN(5) {
				in.Ops = append(in.Ops, g.op(nil, &[]string{}, false))
			}
			return simStep{Kind: "open", In: in}
		}
	}
	switch r := g.rng.IntN(1000); {
	case r < 80 && len(g.past) > 0:
		return simStep{Kind: "replay", In: g.pick1(g.past)}
	case r < 100 && len(g.past) > 0:
		return simStep{Kind: "replay respelled", In: g.respell(g.pick1(g.past))}
	case r < 140 && len(g.past) > 0:
		return simStep{Kind: "conflict", In: g.conflict(g.pick1(g.past))}
	case r < 240:
		return simStep{Kind: "invalid", In: g.invalid(in, a)}
	case r < 270:
		in.Holder = simGhost
		switch r := g.rng.IntN(100); {
		case r < 15: // validation comes before HOLDER_NOT_FOUND
			in = g.invalid(in, nil)
		case r < 30:
			in.Ops = []instructions.Op{{Op: "open"}, g.amountOp("debit", "BTC", 1+g.rng.Int64N(1000))}
		case r < 60 && len(g.past) > 0: // ids are scoped to the holder: no replay, no conflict
			in = g.pick1(g.past)
			if in.Holder != simMain || len(in.Ops) > 0 && in.Ops[0].Op == "open" {
				in = g.fresh(instructions.New(in.ID, simGhost), nil, false)
			}
			in.Holder = simGhost
		default:
			in = g.fresh(in, nil, false)
		}
		return simStep{Kind: "unknown holder", In: in}
	case r < 285:
		in.Ops = []instructions.Op{{Op: "open"}}
		if g.pct(50) {
			in.Ops = append([]instructions.Op{g.amountOp("credit", "CNY", 1)}, in.Ops...)
		}
		return simStep{Kind: "open again", In: in}
	case r < 290:
		for range mMaxOps {
			in.Ops = append(in.Ops, g.amountOp("earn_points", "", 1))
		}
		return simStep{Kind: "64 ops", In: in}
	case r < 370:
		return simStep{Kind: "hold", In: g.bundle(in, a)}
	case r < 385 && len(a.holds) > 0:
		// Close a hold and name it again in the same instruction.
		hold := g.pick(slices.Sorted(maps.Keys(a.holds)))
		asset := g.asset()
		in.Ops = []instructions.Op{{Op: g.pick([]string{"settle", "release"}), Hold: hold},
			g.amountOp("freeze", asset, 1+g.rng.Int64N(a.avail[asset]/2+1))}
		in.Ops[1].Hold, in.Ops[1].TTLMs = hold, g.ttl()
		return simStep{Kind: "close and reopen", In: in}
	default:
		return simStep{Kind: "fresh", In: g.fresh(in, a, true)}
	}
}

func (g *simGen) pick1(xs []instructions.Instruction) instructions.Instruction {
	return xs[g.rng.IntN(len(xs))]
}

// fresh fills in with 1 to 8 random ops, and now and then a counterparty or memo.
func (g *simGen) fresh(in instructions.Instruction, a *mAccounts, open bool) instructions.Instruction {
	k := 1
	switch r := g.rng.IntN(100); {
	case r < 25:
		k = 2
	case r < 45:
		k = 3 + g.rng.IntN(2)
	case r < 50:
		k = 5 + g.rng.IntN(4)
	}
	born := []string{}
	for range k {
		in.Ops = append(in.Ops, g.op(a, &born, open))
	}
	if g.pct(10) {
		in.Counterparty = fmt.Sprintf("merchant:%d", g.rng.IntN(4))
	}
	switch r := g.rng.IntN(100); {
	case r < 8:
		in.Memo = g.pick([]string{"order 55", "line one, line two", "caf\u00e9 \u8ba2\u5355 \U0001F600", `quote " backslash \\ brace {h:x}`})
	case r < 9:
		in.Memo = strings.Repeat("m", mMaxMemo)
	}
	return in
}

// op makes one random op. born lists the holds created earlier in the same
// instruction; open allows an open op (HOLDER_EXISTS on an opened holder).
func (g *simGen) op(a *mAccounts, born *[]string, open bool) instructions.Op {
	if a == nil {
		a = newAccounts()
	}
	// Keep a holder's state small enough for each step to stay cheap: past
	// 15 open holds, settle and release more; past 25 coupons, grant no more.
	if len(a.holds) > 15 && g.pct(40) {
		return g.settleOp(g.pick([]string{"settle", "release"}), a, *born)
	}
	r := g.rng.IntN(1000)
	if len(a.coupons) > 25 && r >= 760 && r < 840 {
		r = 870 // redeem_coupon instead
	}
	switch {
	case r < 140:
		asset := g.asset()
		return g.amountOp("credit", asset, g.units(mScales[asset], a.avail[asset], true))
	case r < 240:
		asset := g.asset()
		return g.amountOp("debit", asset, g.units(mScales[asset], a.avail[asset], false))
	case r < 360:
		asset := g.asset()
		op := g.amountOp("freeze", asset, g.units(mScales[asset], a.avail[asset], false))
		op.Hold, op.TTLMs = g.holdFor(a, born)
		return op
	case r < 410:
		op := g.amountOp("freeze_points", "", g.units(0, a.pAvail, false))
		op.Hold, op.TTLMs = g.holdFor(a, born)
		return op
	case r < 470:
		op := instructions.Op{Op: "lock_coupon", Coupon: g.couponName(a)}
		op.Hold, op.TTLMs = g.holdFor(a, born)
		return op
	case r < 570:
		return g.settleOp("settle", a, *born)
	case r < 650:
		return g.settleOp("release", a, *born)
	case r < 710:
		return g.amountOp("earn_points", "", g.units(0, a.pAvail, true))
	case r < 760:
		return g.amountOp("spend_points", "", g.units(0, a.pAvail, false))
	case r < 840:
		return g.grant(a)
	case r < 890:
		return instructions.Op{Op: "redeem_coupon", Coupon: g.couponName(a)}
	case r < 905:
		return instructions.Op{Op: "suspend"}
	case r < 970:
		return instructions.Op{Op: "resume"}
	case r < 975 && open:
		return instructions.Op{Op: "open"}
	default:
		return g.amountOp("earn_points", "", 1+g.rng.Int64N(100))
	}
}

// amountOp makes an op with an amount of units of asset ("" for points),
// written with the scale's digits or with trailing zeros dropped.
func (g *simGen) amountOp(op, asset string, units int64) instructions.Op {
	leg := asset
	if leg == "" {
		leg = mPoints
	}
	return instructions.Op{Op: op, Asset: asset, Amount: instructions.Amount(g.spell(units, leg))}
}

func (g *simGen) spell(units int64, leg string) string {
	s := mFormat(units, leg)
	if strings.Contains(s, ".") && g.pct(50) {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// units picks an amount: mostly small, else all of have, one unit more,
// part of it, or near 2^53-1 (often for whales).
func (g *simGen) units(scale int, have int64, credit bool) int64 {
	one := int64(1)
	for range scale {
		one *= 10
	}
	big := 4
	if g.whale {
		big = 30
	}
	r := g.rng.IntN(100)
	switch {
	case r < big:
		switch g.rng.IntN(4) {
		case 0:
			return mMaxUnits
		case 1:
			return mMaxUnits - g.rng.Int64N(1000)
		case 2:
			if have > 0 && have < mMaxUnits {
				return mMaxUnits - have // fills up to the limit exactly
			}
		}
		return mMaxUnits/2 + g.rng.Int64N(mMaxUnits/2)
	case credit || have == 0 || r < big+40:
		return 1 + g.rng.Int64N(one*1000)
	case r < big+60:
		return have
	case r < big+70 && have < mMaxUnits:
		return have + 1
	default:
		return 1 + g.rng.Int64N(have)
	}
}

// holdFor names the hold of a freeze, freeze_points or lock_coupon: mostly a
// new one, else one created earlier in the instruction (another leg), an
// open one (HOLD_EXISTS) or an old name (reused once closed). A new hold gets
// a ttl: none, an hour, or 20 to 800 ms.
func (g *simGen) holdFor(a *mAccounts, born *[]string) (string, *int64) {
	var name string
	switch r := g.rng.IntN(100); {
	case r < 30 && len(*born) > 0:
		name = g.pick(*born)
	case r < 37 && len(a.holds) > 0:
		name = g.pick(slices.Sorted(maps.Keys(a.holds)))
	case r < 42 && g.holds > 0:
		name = simName("o", 1+g.rng.IntN(g.holds))
	default:
		g.holds++
		name = simName("o", g.holds)
	}
	isNew := a.holds[name] == nil && !slices.Contains(*born, name)
	if isNew {
		*born = append(*born, name)
	} else if !g.pct(10) { // a ttl on a later op of the same hold: ignored
		return name, nil
	}
	return name, g.ttl()
}

// ttl: none, an hour, or 20 to 800 ms.
func (g *simGen) ttl() *int64 {
	var ttl int64
	switch r := g.rng.IntN(100); {
	case r < 35:
		return nil
	case r < 50:
		ttl = 3_600_000
	default:
		ttl = 20 + g.rng.Int64N(780)
	}
	return &ttl
}

func (g *simGen) settleOp(kind string, a *mAccounts, born []string) instructions.Op {
	op := instructions.Op{Op: kind}
	names := append(slices.Sorted(maps.Keys(a.holds)), born...)
	if len(names) == 0 || g.pct(8) {
		op.Hold = simName("o", g.holds+1+g.rng.IntN(3)) // not open (yet)
	} else {
		op.Hold = g.pick(names)
	}
	h := a.holds[op.Hold]
	switch r := g.rng.IntN(100); {
	case r < 40: // the whole hold
	case r < 85 && h != nil && len(h.legs) > 0:
		op.Leg = g.pick(slices.Sorted(maps.Keys(h.legs)))
		left := h.legs[op.Leg]
		switch r := g.rng.IntN(100); {
		case r < 30: // the whole leg
		case r < 70:
			op.Amount = instructions.Amount(g.spell(1+g.rng.Int64N(left), op.Leg))
		case r < 90:
			op.Amount = instructions.Amount(g.spell(left, op.Leg))
		default:
			op.Amount = instructions.Amount(g.spell(min(left+1, mMaxUnits), op.Leg))
		}
	default: // a leg the hold may lack
		op.Leg = g.pick([]string{"CNY", "USDT", "BTC", mPoints})
		if g.pct(50) {
			op.Amount = instructions.Amount(g.spell(1, op.Leg))
		}
	}
	return op
}

func (g *simGen) couponName(a *mAccounts) string {
	if len(a.coupons) == 0 || g.pct(12) {
		return simName("c", g.coupons+1+g.rng.IntN(3)) // not granted (yet)
	}
	return g.pick(slices.Sorted(maps.Keys(a.coupons)))
}

// grant grants a coupon: new or existing (COUPON_EXISTS); without expiry,
// expired already, expiring within 3 s, or in an hour or more.
func (g *simGen) grant(a *mAccounts) instructions.Op {
	op := instructions.Op{Op: "grant_coupon"}
	if len(a.coupons) > 0 && g.pct(8) {
		op.Coupon = g.pick(slices.Sorted(maps.Keys(a.coupons)))
	} else {
		g.coupons++
		op.Coupon = simName("c", g.coupons)
	}
	now := time.Now().UnixMilli()
	var exp int64
	switch r := g.rng.IntN(100); {
	case r < 40:
		return op
	case r < 47:
		exp = 1
	case r < 55:
		exp = now - 3_600_000
	case r < 80:
		exp = now + 100 + g.rng.Int64N(2900)
	default:
		exp = now + 3_600_000 + g.rng.Int64N(86_400_000)
	}
	op.ExpiresMs = &exp
	return op
}

// bundle opens a multi-leg hold in one instruction: funds of one or two
// assets, points, a coupon; now and then settles or releases part of it at once.
func (g *simGen) bundle(in instructions.Instruction, a *mAccounts) instructions.Instruction {
	g.holds++
	hold := simName("o", g.holds)
	ttl := g.ttl()
	part := func(have int64) int64 { return 1 + g.rng.Int64N(have/3+1) }
	first := g.asset()
	op := g.amountOp("freeze", first, part(a.avail[first]))
	op.Hold, op.TTLMs = hold, ttl
	in.Ops = append(in.Ops, op)
	if second := g.asset(); second != first && g.pct(50) {
		op := g.amountOp("freeze", second, part(a.avail[second]))
		op.Hold = hold
		if g.pct(15) {
			op.TTLMs = g.ttl() // only the op that creates a hold gives its ttl
		}
		in.Ops = append(in.Ops, op)
	}
	if g.pct(50) {
		op := g.amountOp("freeze_points", "", part(a.pAvail))
		op.Hold = hold
		in.Ops = append(in.Ops, op)
	}
	if g.pct(50) {
		var free []string
		for _, id := range slices.Sorted(maps.Keys(a.coupons)) {
			if a.coupons[id].state == mAvailable {
				free = append(free, id)
			}
		}
		if len(free) > 0 {
			in.Ops = append(in.Ops, instructions.Op{Op: "lock_coupon", Coupon: g.pick(free), Hold: hold})
		}
	}
	switch r := g.rng.IntN(100); {
	case r < 20:
		in.Ops = append(in.Ops, instructions.Op{Op: "settle", Hold: hold, Leg: first, Amount: instructions.Amount(g.spell(1, first))})
	case r < 30:
		in.Ops = append(in.Ops, instructions.Op{Op: "release", Hold: hold})
	}
	return in
}

// respell writes an earlier instruction another way with the same meaning:
// amounts with more or fewer trailing zeros, the default counterparty named
// or left out.
func (g *simGen) respell(in instructions.Instruction) instructions.Instruction {
	switch in.Counterparty {
	case "":
		in.Counterparty = "external"
	case "external":
		in.Counterparty = ""
	}
	in.Ops = slices.Clone(in.Ops)
	for i, op := range in.Ops {
		leg := op.Asset
		if op.Leg != "" {
			leg = op.Leg
		}
		if leg == "" {
			leg = mPoints
		}
		if u, ok := mUnits(string(op.Amount), mScales[leg]); ok && leg != mPoints {
			s := mFormat(u, leg)
			if string(op.Amount) == s {
				s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			}
			in.Ops[i].Amount = instructions.Amount(s)
		}
	}
	return in
}

// conflict reuses the id of an earlier instruction with another body.
func (g *simGen) conflict(in instructions.Instruction) instructions.Instruction {
	in.Ops = slices.Clone(in.Ops)
	switch g.rng.IntN(4) {
	case 0:
		in.Memo += " changed"
	case 1:
		in.Counterparty = "someone-else"
	case 2:
		if len(in.Ops) < mMaxOps {
			in.Ops = append(in.Ops, g.amountOp("credit", "CNY", 1))
			break
		}
		fallthrough
	default:
		for i, op := range in.Ops {
			leg := op.Asset
			if op.Leg != "" {
				leg = op.Leg
			}
			if leg == "" {
				leg = mPoints
			}
			if u, ok := mUnits(string(op.Amount), mScales[leg]); ok {
				in.Ops[i].Amount = instructions.Amount(mFormat(max(1, (u+1)%mMaxUnits), leg))
				return in
			}
		}
		in.Memo += " changed"
	}
	return in
}

// invalid makes an instruction with one defect that validation must catch.
func (g *simGen) invalid(in instructions.Instruction, a *mAccounts) instructions.Instruction {
	in = g.fresh(in, a, false)
	ttl0, ttlNeg, ttlOK, expNeg := int64(0), int64(-5), int64(1000), int64(-1)
	badOps := []instructions.Op{
		{Op: "credit", Asset: "CNY", Amount: "0"},
		{Op: "debit", Asset: "CNY", Amount: "-1"},
		{Op: "credit", Asset: "CNY", Amount: "1.001"},
		{Op: "credit", Asset: "CNY", Amount: "1.000"},
		{Op: "credit", Asset: "BTC", Amount: "0.000000001"},
		{Op: "earn_points", Amount: "1.5"},
		{Op: "credit", Asset: "USDT", Amount: "1e3"},
		{Op: "credit", Asset: "USDT", Amount: "0x10"},
		{Op: "credit", Asset: "USDT", Amount: " 5"},
		{Op: "credit", Asset: "USDT", Amount: "NaN"},
		{Op: "credit", Asset: "USDT", Amount: "Infinity"},
		{Op: "credit", Asset: "USDT", Amount: "+5"},
		{Op: "credit", Asset: "CNY", Amount: "90071992547409.92"}, // 2^53 minor units
		{Op: "earn_points", Amount: "9007199254740992"},
		{Op: "freeze", Asset: "BTC", Amount: "90071992.54740992", Hold: "x"},
		{Op: "credit", Asset: "XYZ", Amount: "1"},
		{Op: "credit", Asset: "points", Amount: "1"},
		{Op: "settle", Hold: "o1", Leg: "XYZ", Amount: "1"},
		{Op: "release", Hold: "o1", Leg: "points", Amount: "1.0"},
		{Op: "settle", Hold: "o1", Leg: "cny"},
		{Op: "settle", Hold: "o1", Amount: "1"},
		{Op: "release", Hold: "o1", Amount: "1"},
		{Op: "freeze", Asset: "CNY", Amount: "1", Hold: "{x}"},
		{Op: "lock_coupon", Coupon: "a b", Hold: "x"},
		{Op: "grant_coupon", Coupon: strings.Repeat("c", 65)},
		{Op: "transfer", Asset: "CNY", Amount: "1"},
		{Op: "debit", Asset: "CNY"},
		{Op: "freeze", Asset: "CNY", Amount: "1"},
		{Op: "debit", Asset: "CNY", Amount: "1", Hold: "x"},
		{Op: "settle", Hold: "o1", Asset: "CNY"},
		{Op: "grant_coupon", Coupon: "c", TTLMs: &ttlOK},
		{Op: "freeze", Asset: "CNY", Amount: "1", Hold: "x", TTLMs: &ttl0},
		{Op: "freeze_points", Amount: "1", Hold: "x", TTLMs: &ttlNeg},
		{Op: "grant_coupon", Coupon: "c", ExpiresMs: &expNeg},
	}
	whole := []func(){
		func() { in.ID = "bad id" },
		func() { in.ID = "" },
		func() { in.ID = strings.Repeat("i", 65) },
		func() { in.Holder = "{h:x}" },
		func() { in.Counterparty = "a/b" },
		func() { in.Memo = strings.Repeat("m", mMaxMemo+1) },
		func() { in.Memo = "poison\x00x" },
		func() { in.Memo = "line one\nline two" },
		func() { in.Memo = "del\x7f" },
		func() { in.Ops = nil },
		func() {
			for len(in.Ops) <= mMaxOps {
				in.Ops = append(in.Ops, g.amountOp("credit", "CNY", 1))
			}
		},
	}
	if d := g.rng.IntN(len(badOps) + len(whole)); d < len(badOps) {
		at := g.rng.IntN(len(in.Ops) + 1)
		in.Ops = slices.Insert(slices.Clone(in.Ops), at, badOps[d])
	} else {
		whole[d-len(badOps)]()
	}
	return in
}
