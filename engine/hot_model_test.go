package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

var hotSimSteps = flag.Int("model.hotsteps", 250, "steps per hot holder in TestModel_HotHoldersAgreeWithEngine")

// hotSim drives one hot holder through the engine and through the model of
// the contract (model_test.go) at once. Each lane is a holder in every
// respect, so the model is one modelHolder per lane, and the routing of
// DESIGN.md ("Hot holders") decides which: a credit-only instruction goes to
// the lane its id picks (or to the lane that has its record, for a retry
// across a raise), a transfer's credit to the lane the transfer's id picks,
// everything else to lane 0; a sweep moves every receiving lane's available
// balances and points into lane 0; a raise opens the new lanes and raises
// the others (one applied instruction each, as on lane 0).
type hotSim struct {
	rng    *rand.Rand
	holder string
	lanes  []*modelHolder
	payer  string
	paid   int64 // CNY units the payer paid the holder
	n      int   // ids made
	credit []instructions.Instruction
	spent  []instructions.Instruction
	xfers  []instructions.Transfer
	tally  map[string]int
}

func (s *hotSim) id(prefix string) string { s.n++; return prefix + strconv.Itoa(s.n) }

// open applies (in the model) an open to lanes from..to-1.
func (s *hotSim) open(from, to int) {
	for i := from; i < to; i++ {
		m := newModelHolder()
		n, _ := mValidate(instructions.New("open", s.holder).Open())
		out, acc := m.eval(n, time.Now().UnixMilli())
		m.commit(n, out, acc)
		s.lanes = append(s.lanes, m)
	}
}

// TestModel_HotHoldersAgreeWithEngine drives random steps on hot holders,
// several in parallel: credits (instructions through Apply and ApplyBatch,
// retries and conflicting bodies among them, one-payer transfers),
// debits, spends, freezes and releases on lane 0, mixed instructions,
// sweeps and raises of the lane count. Each outcome is compared with the
// model's; after each step the holder's state is the model's lane by lane,
// its total is the model's sum, and its total is the sum of its lanes.
func TestModel_HotHoldersAgreeWithEngine(t *testing.T) {
	needRedis(t)
	seed := *simSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -seed=%d)", seed, seed)
	ctx := context.Background()
	var (
		mu    sync.Mutex
		tally = map[string]int{}
		wg    sync.WaitGroup
	)
	for i := range 4 {
		wg.Go(func() {
			s := &hotSim{rng: rand.New(rand.NewPCG(uint64(seed), uint64(i))), holder: newID("mhot"), tally: map[string]int{}}
			_, err := eng.Apply(ctx, instructions.New("open", s.holder).OpenHot(2))
			if err != nil {
				t.Error(err)
				return
			}
			s.open(0, 2)
			s.payer = newID("mpayer")
			if _, err := eng.Apply(ctx, instructions.New("open", s.payer).Open().Credit("CNY", "1000000.00")); err != nil {
				t.Error(err)
				return
			}
			for step := range *hotSimSteps {
				kind, d := s.step(ctx)
				if d == "" {
					d = s.check(ctx)
				}
				if d != "" {
					t.Errorf("seed %d, holder %d, step %d (%s): %s", seed, i, step, kind, d)
					return
				}
				s.tally[kind]++
			}
			st, err := eng.State(ctx, s.payer)
			if err != nil || st.Balances["CNY"].Available != instructions.FromUnits(100000000-s.paid, 2) {
				t.Errorf("payer: %v %+v, paid %d", err, st.Balances, s.paid)
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range s.tally {
				tally[k] += v
			}
		})
	}
	wg.Wait()
	t.Logf("steps: %v", tally)
}

// step makes and runs one random step; it returns its kind and what the
// engine and the model disagree on ("" when they agree).
func (s *hotSim) step(ctx context.Context) (string, string) {
	switch p := s.rng.IntN(100); {
	case p < 35:
		return "credit", s.apply(ctx, s.newCredit())
	case p < 45 && len(s.credit) > 0:
		in := s.credit[s.rng.IntN(len(s.credit))]
		if s.rng.IntN(3) == 0 {
			in.Ops = append(in.Ops[:len(in.Ops):len(in.Ops)], instructions.Op{Op: instructions.OpEarnPoints, Amount: "1"})
			return "credit conflict", s.apply(ctx, in)
		}
		return "credit retry", s.apply(ctx, in)
	case p < 60:
		return "transfer", s.transfer(ctx)
	case p < 75:
		return "spend", s.apply(ctx, s.newSpend())
	case p < 80 && len(s.spent) > 0:
		return "spend retry", s.apply(ctx, s.spent[s.rng.IntN(len(s.spent))])
	case p < 92:
		return "sweep", s.sweep(ctx)
	case p < 94 && len(s.lanes) < 12:
		return "raise", s.raise(ctx)
	default:
		return "transfer retry", s.retryTransfer(ctx)
	}
}

func (s *hotSim) amount(scale int32) string {
	return instructions.FromUnits(int64(1+s.rng.IntN(5000)), scale)
}

func (s *hotSim) newCredit() instructions.Instruction {
	in := instructions.New(s.id("c"), s.holder)
	for range 1 + s.rng.IntN(2) {
		switch s.rng.IntN(3) {
		case 0:
			in = in.Credit("CNY", s.amount(2))
		case 1:
			in = in.Credit("USDT", s.amount(6))
		default:
			in = in.EarnPoints(s.amount(0))
		}
	}
	s.credit = append(s.credit, in)
	return in
}

// newSpend is an instruction for lane 0: it takes value out (sometimes more
// than lane 0 has), or holds it, or mixes a credit with a debit.
func (s *hotSim) newSpend() instructions.Instruction {
	in := instructions.New(s.id("d"), s.holder)
	switch s.rng.IntN(6) {
	case 0:
		in = in.Debit("CNY", s.amount(2))
	case 5: // more than lane 0 has, often: the rest waits in the lanes
		in = in.Debit("CNY", instructions.FromUnits(int64(20000+s.rng.IntN(100000)), 2))
	case 1:
		in = in.SpendPoints(s.amount(0))
	case 2:
		in = in.Credit("CNY", s.amount(2)).Debit("CNY", s.amount(2))
	case 3:
		in = in.Freeze("CNY", s.amount(2), "h"+strconv.Itoa(s.n), 0)
	default:
		in = in.Release("h" + strconv.Itoa(s.rng.IntN(s.n+1)))
	}
	s.spent = append(s.spent, in)
	return in
}

// laneFor is the lane the model routes in to: a credit-only instruction to
// the lane that has its record, else to the lane its id picks; others to 0.
func (s *hotSim) laneFor(in instructions.Instruction) int {
	for _, op := range in.Ops {
		if op.Op != instructions.OpCredit && op.Op != instructions.OpEarnPoints {
			return 0
		}
	}
	for i, m := range s.lanes {
		if _, ok := m.tx[in.ID]; ok {
			return i
		}
	}
	return engine.LaneOf(in.ID, len(s.lanes))
}

// apply sends in through Apply or ApplyBatch and the model's lane.
func (s *hotSim) apply(ctx context.Context, in instructions.Instruction) string {
	lane := s.laneFor(in)
	m := s.lanes[lane]
	n, want, decided := m.before(in)
	var res instructions.Result
	var err error
	if s.rng.IntN(2) == 0 {
		o := eng.ApplyBatch(ctx, []instructions.Instruction{in})[0]
		res, err = o.Result, o.Err
	} else {
		res, err = eng.Apply(ctx, in)
	}
	var got *engine.Error
	if err != nil && !errors.As(err, &got) {
		return fmt.Sprintf("engine returned %T %v", err, err)
	}
	if !decided {
		var acc *mAccounts
		want, acc = m.eval(n, time.Now().UnixMilli())
		want.res.Lane = lane
		if d := simCompare(&want, res, got, 0, 0); d != "" {
			return fmt.Sprintf("lane %d: %s", lane, d)
		}
		m.commit(n, want, acc)
		s.tally["~"+simOutcomeName(want)]++
		return ""
	}
	return simCompare(&want, res, got, 0, 0)
}

// transfer pays the holder CNY from the payer, a one-payer transfer.
func (s *hotSim) transfer(ctx context.Context) string {
	units := int64(1 + s.rng.IntN(5000))
	amt := instructions.FromUnits(units, 2)
	tr := instructions.Transfer{ID: newID("t"), Parts: []instructions.Part{
		part(s.payer, ops().Debit("CNY", amt)), part(s.holder, ops().Credit("CNY", amt))}}
	st, err := eng.Transfer(ctx, tr)
	if err != nil || st.Status != engine.TransferCommitted {
		return fmt.Sprintf("transfer %s: %v %+v", tr.ID, err, st)
	}
	s.xfers = append(s.xfers, tr)
	s.paid += units
	a := s.lanes[engine.LaneOf(tr.ID, len(s.lanes))].acc
	a.avail["CNY"] += units
	a.seq++
	return ""
}

// retryTransfer sends an earlier transfer again: it replays, changing nothing.
func (s *hotSim) retryTransfer(ctx context.Context) string {
	if len(s.xfers) == 0 {
		return s.transfer(ctx)
	}
	tr := s.xfers[s.rng.IntN(len(s.xfers))]
	st, err := eng.Transfer(ctx, tr)
	if err != nil || st.Status != engine.TransferCommitted || !st.Replayed {
		return fmt.Sprintf("transfer %s again: %v %+v", tr.ID, err, st)
	}
	return ""
}

// sweep moves every receiving lane's available balances and points to lane 0.
func (s *hotSim) sweep(ctx context.Context) string {
	got, err := eng.SweepHot(ctx, s.holder)
	if err != nil {
		return fmt.Sprintf("sweep: %v", err)
	}
	moved := 0
	zero := s.lanes[0].acc
	for _, m := range s.lanes[1:] {
		a, any := m.acc, false
		for asset, u := range a.avail {
			if u > 0 {
				zero.avail[asset] += u
				a.avail[asset], any = 0, true
			}
		}
		if a.pAvail > 0 {
			zero.pAvail += a.pAvail
			a.pAvail, any = 0, true
		}
		if any {
			a.seq++
			zero.seq++
			moved++
		}
	}
	if got.Moved != moved || got.Lanes != len(s.lanes) || len(got.Missing) > 0 {
		return fmt.Sprintf("sweep: engine %+v, model moved %d of %d lanes", got, moved, len(s.lanes))
	}
	return ""
}

// raise raises the holder's lanes by 1 to 3.
func (s *hotSim) raise(ctx context.Context) string {
	to := len(s.lanes) + 1 + s.rng.IntN(3)
	if _, err := eng.Apply(ctx, instructions.New(s.id("raise"), s.holder).SetLanes(to)); err != nil {
		return fmt.Sprintf("raise to %d: %v", to, err)
	}
	for _, m := range s.lanes {
		m.acc.seq++ // lanes-set on the receiving lanes, set_lanes on lane 0
	}
	s.open(len(s.lanes), to)
	return ""
}

// check compares the holder's state with the model: lane by lane, the total
// with the model's sum, and the total with the sum of the lanes.
func (s *hotSim) check(ctx context.Context) string {
	st, err := eng.State(ctx, s.holder)
	if err != nil {
		return fmt.Sprintf("state: %v", err)
	}
	if len(st.Lanes) != len(s.lanes) {
		return fmt.Sprintf("state has %d lanes, the model %d", len(st.Lanes), len(s.lanes))
	}
	total := newAccounts()
	sum := map[string]int64{}
	var points int64
	for i, m := range s.lanes {
		want, _ := m.state(s.holder)
		l := st.Lanes[i]
		got := simState(instructions.State{Holder: s.holder, Status: want.Status, Seq: l.Seq, Balances: l.Balances, Points: l.Points,
			Coupons: want.Coupons, Holds: want.Holds})
		if w := simState(want); !reflect.DeepEqual(w, got) {
			return fmt.Sprintf("lane %d differs\n  model:  %s\n  engine: %s", i, simJSON(w), simJSON(got))
		}
		for a, u := range m.acc.avail {
			total.avail[a] += u
		}
		total.pAvail += m.acc.pAvail
		for a, b := range l.Balances {
			scale, _ := eng.Assets().Scale(a)
			u, _ := instructions.ToUnits(b.Available, scale)
			sum[a] += u
		}
		p, _ := instructions.ToUnits(l.Points.Available, 0)
		points += p
	}
	zero := s.lanes[0].acc
	total.status, total.seq, total.frozen, total.pFrozen, total.holds = zero.status, zero.seq, zero.frozen, zero.pFrozen, zero.holds
	m := &modelHolder{acc: total}
	want, _ := m.state(s.holder)
	if w, g := simState(want), simState(st); !reflect.DeepEqual(w, simState(instructions.State{Holder: g.Holder, Status: g.Status,
		Seq: g.Seq, Balances: g.Balances, Points: g.Points, Coupons: g.Coupons, Holds: g.Holds})) {
		return fmt.Sprintf("total differs\n  model:  %s\n  engine: %s", simJSON(w), simJSON(g))
	}
	for a, b := range st.Balances {
		scale, _ := eng.Assets().Scale(a)
		if u, _ := instructions.ToUnits(b.Available, scale); u != sum[a] {
			return fmt.Sprintf("%s: total %s, the lanes sum to %d units", a, b.Available, sum[a])
		}
	}
	if p, _ := instructions.ToUnits(st.Points.Available, 0); p != points {
		return fmt.Sprintf("points: total %s, the lanes sum to %d", st.Points.Available, points)
	}
	return ""
}
