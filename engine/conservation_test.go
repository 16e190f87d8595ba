package engine_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// flows are the money that entered and left a holder, by asset (and points),
// in minor units, as the engine's answers show them.
type flows struct {
	credits, debits, settled map[string]int64
	applied                  int64 // instructions applied (replays not counted)
}

func newFlows() *flows {
	return &flows{credits: map[string]int64{}, debits: map[string]int64{}, settled: map[string]int64{}}
}

func (f *flows) add(g *flows) {
	for _, p := range [][2]map[string]int64{{f.credits, g.credits}, {f.debits, g.debits}, {f.settled, g.settled}} {
		for leg, u := range p[1] {
			p[0][leg] += u
		}
	}
	f.applied += g.applied
}

// TestConservation_ConcurrentMixedOps: many goroutines on a few holders, with
// credits, debits, points, multi-leg holds (some expiring), partial and full
// settles and releases, concurrent duplicates and replays. Afterwards money is
// conserved: for every asset, the sum over holders of available plus frozen
// equals credits minus debits minus settled, exactly. The flows come from the
// engine's own answers: an instruction counts once, when its result is not a
// replay; a settle without an amount captures what the engine's last result
// for that hold said was left in it. Each holder's frozen funds equal what
// those results say its open holds keep, and its seq counts its applied
// instructions.
func TestConservation_ConcurrentMixedOps(t *testing.T) {
	needRedis(t)
	const nHolders, nWorkers, perWorker = 3, 12, 300
	seed := *simSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -seed=%d)", seed, seed)

	holders := make([]string, nHolders)
	books := map[string]*flows{}
	for i := range holders {
		holders[i] = newHolder(t, nil)
		books[holders[i]] = newFlows()
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		left = map[string]map[string]int64{} // holder -> leg -> units kept by open holds, per the results
	)
	start := time.Now()
	for w := range nWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cw := conservationWorker{t: t, w: w, holders: holders, rng: rand.New(rand.NewPCG(uint64(seed), uint64(w))),
				holds: map[string]*cwHold{}, books: map[string]*flows{}}
			for _, h := range holders {
				cw.books[h] = newFlows()
			}
			for k := range perWorker {
				cw.step(context.Background(), k)
			}
			mu.Lock()
			defer mu.Unlock()
			for h, f := range cw.books {
				books[h].add(f)
			}
			for _, hold := range cw.holds {
				if left[hold.holder] == nil {
					left[hold.holder] = map[string]int64{}
				}
				for leg, u := range hold.legs {
					left[hold.holder][leg] += u
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	sum, want := map[string]int64{}, map[string]int64{}
	total := newFlows()
	for _, h := range holders {
		st := state(t, h)
		f := books[h]
		total.add(f)
		assert.Equal(t, 1+f.applied, st.Seq, "%s: seq counts the opening and every applied instruction", h)
		have, frozen := map[string]int64{}, map[string]int64{}
		for asset, b := range st.Balances {
			have[asset] = cUnits(t, b.Available, asset) + cUnits(t, b.Frozen, asset)
			frozen[asset] = cUnits(t, b.Frozen, asset)
		}
		have[mPoints] = cUnits(t, st.Points.Available, mPoints) + cUnits(t, st.Points.Frozen, mPoints)
		frozen[mPoints] = cUnits(t, st.Points.Frozen, mPoints)
		for _, leg := range []string{"CNY", "USDT", "BTC", mPoints} {
			expect := f.credits[leg] - f.debits[leg] - f.settled[leg]
			assert.Equal(t, expect, have[leg], "%s %s: available+frozen vs credits-debits-settled", h, leg)
			assert.Equal(t, left[h][leg], frozen[leg], "%s %s: frozen vs the open holds' legs in the results", h, leg)
			sum[leg] += have[leg]
			want[leg] += expect
		}
	}
	var lines []string
	for _, leg := range slices.Sorted(maps.Keys(want)) {
		assert.Equal(t, want[leg], sum[leg], "%s: sum over holders of available+frozen vs credits-debits-settled", leg)
		lines = append(lines, fmt.Sprintf("%s %s = %s - %s - %s", leg, mFormat(sum[leg], leg),
			mFormat(total.credits[leg], leg), mFormat(total.debits[leg], leg), mFormat(total.settled[leg], leg)))
	}
	t.Logf("%d instructions by %d workers on %d holders in %v, %d applied; available+frozen = credits - debits - settled:\n  %s",
		nWorkers*perWorker, nWorkers, nHolders, elapsed.Round(time.Millisecond), total.applied, strings.Join(lines, "\n  "))
}

// cUnits reads a figure of a result or state (zero allowed) as minor units.
// Workers call it too: it reports with assert, never stops the test.
func cUnits(t *testing.T, s, leg string) int64 {
	if simZero(s) {
		return 0
	}
	u, ok := mUnits(s, mScales[leg])
	assert.True(t, ok, "figure %q of %s", s, leg)
	return u
}

// cwHold is an open hold of one worker, as the engine's last result for it showed it.
type cwHold struct {
	holder string
	legs   map[string]int64
}

type conservationWorker struct {
	t       *testing.T
	w       int
	rng     *rand.Rand
	holders []string
	holds   map[string]*cwHold // the worker's own open holds: no other worker names them
	books   map[string]*flows
	sent    []cwSent
}

type cwSent struct {
	in  instructions.Instruction
	seq int64             // of the result, or 0
	err instructions.Code // or ""
}

func (c *conservationWorker) step(ctx context.Context, k int) {
	t := c.t
	if len(c.sent) > 0 && c.rng.IntN(100) < 5 { // a replay changes nothing and counts nothing
		s := c.sent[c.rng.IntN(len(c.sent))]
		res, err := eng.Apply(ctx, s.in)
		var e *engine.Error
		switch {
		case s.err == "" && err == nil:
			assert.True(t, res.Replayed, "replay of %s", s.in.ID)
			assert.Equal(t, s.seq, res.Seq, "replay of %s", s.in.ID)
		case s.err != "" && errors.As(err, &e):
			assert.True(t, e.Replayed, "replay of %s", s.in.ID)
			assert.Equal(t, s.err, e.Code, "replay of %s", s.in.ID)
		default:
			t.Errorf("replay of %s: first %q, now %v", s.in.ID, s.err, err)
		}
		return
	}

	holder := c.holders[c.rng.IntN(len(c.holders))]
	in := instructions.New(fmt.Sprintf("w%d-%d", c.w, k), holder)
	f := newFlows()
	named := map[string]bool{} // holds this instruction names: at most one op each, but for a new hold's legs
	for i := range 1 + c.rng.IntN(3) {
		asset := []string{"CNY", "USDT", "BTC"}[c.rng.IntN(3)]
		u := 1 + c.rng.Int64N(100_000)
		var mine []string
		for _, name := range slices.Sorted(maps.Keys(c.holds)) {
			if c.holds[name].holder == holder && !named[name] {
				mine = append(mine, name)
			}
		}
		switch r := c.rng.IntN(100); {
		case r < 24:
			in = in.Credit(asset, mFormat(u*3, asset))
			f.credits[asset] += u * 3
		case r < 36:
			in = in.Debit(asset, mFormat(u, asset))
			f.debits[asset] += u
		case r < 44:
			in = in.EarnPoints(mFormat(u, mPoints))
			f.credits[mPoints] += u
		case r < 50:
			in = in.SpendPoints(mFormat(u/2+1, mPoints))
			f.debits[mPoints] += u/2 + 1
		case r < 66:
			name := fmt.Sprintf("w%d-%d-%d", c.w, k, i)
			var ttl time.Duration
			if c.rng.IntN(2) == 0 {
				ttl = time.Duration(30+c.rng.IntN(300)) * time.Millisecond
			}
			in = in.Freeze(asset, mFormat(u, asset), name, ttl)
			if c.rng.IntN(3) == 0 {
				in = in.FreezePoints(mFormat(u/3+1, mPoints), name)
			}
			named[name] = true
		case r < 86 && len(mine) > 0:
			name := mine[c.rng.IntN(len(mine))]
			h := c.holds[name]
			legs := slices.Sorted(maps.Keys(h.legs))
			leg := legs[c.rng.IntN(len(legs))]
			switch c.rng.IntN(3) {
			case 0:
				in = in.Settle(name)
				for l, v := range h.legs {
					f.settled[l] += v
				}
			case 1:
				in = in.SettleLeg(name, leg, "")
				f.settled[leg] += h.legs[leg]
			default:
				part := 1 + c.rng.Int64N(h.legs[leg])
				in = in.SettleLeg(name, leg, mFormat(part, leg))
				f.settled[leg] += part
			}
			named[name] = true
		case len(mine) > 0:
			name := mine[c.rng.IntN(len(mine))]
			h := c.holds[name]
			legs := slices.Sorted(maps.Keys(h.legs))
			if leg := legs[c.rng.IntN(len(legs))]; c.rng.IntN(2) == 0 {
				in = in.ReleaseLeg(name, leg, mFormat(1+c.rng.Int64N(h.legs[leg]), leg))
			} else {
				in = in.Release(name)
			}
			named[name] = true
		default:
			in = in.Credit(asset, mFormat(u, asset))
			f.credits[asset] += u
		}
	}

	res, err := c.apply(ctx, in)
	var e *engine.Error
	switch {
	case err == nil:
		f.applied = 1
		c.books[holder].add(f)
		c.sent = append(c.sent, cwSent{in: in, seq: res.Seq})
		for name := range named {
			rh, open := res.Holds[name]
			if !open {
				delete(c.holds, name)
				continue
			}
			h := &cwHold{holder: holder, legs: map[string]int64{}}
			for leg, v := range rh.Legs {
				h.legs[leg] = cUnits(t, v, leg)
			}
			c.holds[name] = h
		}
	case errors.As(err, &e) && slices.Contains([]instructions.Code{instructions.CodeInsufficientFunds,
		instructions.CodeInsufficientPoints, instructions.CodeHoldExpired}, e.Code):
		c.sent = append(c.sent, cwSent{in: in, err: e.Code})
	default:
		t.Errorf("%s: %v", in.ID, err)
	}
}

// apply sends in, now and then twice at once (a double click, a client retry
// racing the first try): then exactly one answer is fresh, the other a replay
// of it.
func (c *conservationWorker) apply(ctx context.Context, in instructions.Instruction) (instructions.Result, error) {
	if c.rng.IntN(100) >= 10 {
		res, err := eng.Apply(ctx, in)
		if err == nil {
			assert.False(c.t, res.Replayed, "%s: first answer marked replayed", in.ID)
		}
		return res, err
	}
	var wg sync.WaitGroup
	var res [2]instructions.Result
	var errs [2]error
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = eng.Apply(ctx, in)
		}()
	}
	wg.Wait()
	var e0, e1 *engine.Error
	switch {
	case errs[0] == nil && errs[1] == nil:
		assert.NotEqual(c.t, res[0].Replayed, res[1].Replayed, "%s sent twice: one applied, one replayed", in.ID)
		assert.Equal(c.t, res[0].Seq, res[1].Seq, "%s sent twice", in.ID)
		if res[0].Replayed {
			return res[1], nil
		}
		return res[0], nil
	case errors.As(errs[0], &e0) && errors.As(errs[1], &e1):
		assert.Equal(c.t, e0.Code, e1.Code, "%s sent twice", in.ID)
		assert.NotEqual(c.t, e0.Replayed, e1.Replayed, "%s sent twice: one rejection, one replayed", in.ID)
		return instructions.Result{}, errs[0]
	default:
		c.t.Errorf("%s sent twice: %v and %v", in.ID, errs[0], errs[1])
		return instructions.Result{}, errors.Join(errs[0], errs[1])
	}
}
