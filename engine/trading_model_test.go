package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// The randomized model test of the trading flow. Lots: a USDT lot is
// 10 USDT, a BTC lot 0.01 BTC.
const (
	tmBuyers         = 3
	tmSellers        = 3
	tmOrdersPer      = 3
	tmFills          = 42
	tmBuyerUSDT      = 1000
	tmSellerBTCLots  = 100 // 1 BTC
	tmRecoveryPeriod = 120 * time.Millisecond
)

func tmUSDT(lots int64) string { return strconv.FormatInt(lots*10, 10) }
func tmBTC(lots int64) string  { return fmt.Sprintf("%d.%02d", lots/100, lots%100) }

// tmOrder is an order hold and what the model knows of it.
type tmOrder struct {
	holder, hold, asset string
	initial             int64 // lots
	ttl                 time.Duration
	exp                 int64
	closedWhole         bool  // a cancel or the sweeper's release of it applied
	released            int64 // lots released by partial releases that applied
}

// tmFill is one trade and what the engine said of it.
type tmFill struct {
	tr           instructions.Transfer
	buy, sell    int // orders
	usdt, btc    int64
	bad          bool   // the seller's part asks more than its order ever held
	skipped      bool   // a whole-order fill whose order had nothing left when it was made
	mode         string // direct, twice, stopped
	seen         []string
	final        engine.TransferState
	stoppedAfter string
}

// TestTradingModel_ConcurrentFillsCancelsAndExpiry runs fills (two-phase
// trades) concurrently against buyers' USDT orders and sellers' BTC orders,
// several per order, some bound to abort (the seller asks more than its
// order ever held), with cancels, partial releases, TTL orders swept when
// they expire, drivers stopped after begin or a prepare (some begun by an
// engine of a short transfer timeout, so that recovery may abort them) and
// fills driven by two callers at once. Once every fill is decided and
// finished, it checks what each order and each holder must hold given the
// outcomes the engine reported. TRADING_SEED replays a schedule.
func TestTradingModel_ConcurrentFillsCancelsAndExpiry(t *testing.T) {
	runTradingModel(t, false)
}

// runTradingModel runs the model test; with whole, some fills settle their
// buyer's order whole (settle without leg or amount, what the order held
// when the fill was made), which docs/transfers.md says closes the order
// at its commit.
func runTradingModel(t *testing.T, whole bool) {
	needRedis(t)
	seed := time.Now().UnixNano()
	if s := os.Getenv("TRADING_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (TRADING_SEED=%d replays the schedule)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	usdtScale, _ := eng.Assets().Scale("USDT")
	btcScale, _ := eng.Assets().Scale("BTC")
	lotUnits := map[string]int64{"USDT": 10 * pow10(usdtScale), "BTC": pow10(btcScale) / 100}
	lots := func(asset, amount string) int64 {
		scale := usdtScale
		if asset == "BTC" {
			scale = btcScale
		}
		if strings.Trim(amount, "0.") == "" {
			return 0
		}
		n, ok := instructions.ToUnits(amount, scale)
		require.True(t, ok, "amount %q", amount)
		require.Zero(t, n%lotUnits[asset], "%s %s is not a whole number of lots", amount, asset)
		return n / lotUnits[asset]
	}

	// Holders on the three masters, then their orders.
	var setups []func(instructions.Instruction) instructions.Instruction
	for i := 0; i < tmBuyers; i++ {
		setups = append(setups, func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", strconv.Itoa(tmBuyerUSDT))
		})
	}
	for i := 0; i < tmSellers; i++ {
		setups = append(setups, func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("BTC", tmBTC(tmSellerBTCLots))
		})
	}
	hs := holdersOnMasters(t, setups...)
	buyers := hs[:tmBuyers]
	before := totals(t, hs...)

	var orders []*tmOrder
	var buyOrders, sellOrders []int
	for _, h := range hs {
		asset := "BTC"
		if slices.Contains(buyers, h) {
			asset = "USDT"
		}
		for j := 0; j < tmOrdersPer; j++ {
			o := &tmOrder{holder: h, hold: fmt.Sprintf("ord-%d", j), asset: asset, initial: int64(4 + rng.Intn(8))}
			if asset == "USDT" && rng.Intn(2) == 0 {
				o.ttl = time.Duration(800+rng.Intn(1200)) * time.Millisecond
			}
			amount := tmUSDT(o.initial)
			if asset == "BTC" {
				amount = tmBTC(o.initial)
			}
			res := apply(t, instructions.New(newID("order"), h).Freeze(asset, amount, o.hold, o.ttl))
			o.exp = res.Holds[o.hold].ExpiresMs
			if asset == "USDT" {
				buyOrders = append(buyOrders, len(orders))
			} else {
				sellOrders = append(sellOrders, len(orders))
			}
			orders = append(orders, o)
		}
	}

	// The schedule.
	short := engine.New(rdb, &engine.Options{TransferTimeout: 300 * time.Millisecond})
	fills := make([]*tmFill, tmFills)
	for i := range fills {
		f := &tmFill{buy: buyOrders[rng.Intn(len(buyOrders))], sell: sellOrders[rng.Intn(len(sellOrders))],
			usdt: int64(1 + rng.Intn(4)), btc: int64(1 + rng.Intn(4))}
		if rng.Intn(7) == 0 {
			f.bad, f.btc = true, orders[f.sell].initial+1+int64(rng.Intn(2))
		}
		switch r := rng.Intn(10); {
		case whole && !f.bad && r < 3:
			f.mode = "whole"
		case r < 5:
			f.mode = "direct"
		case r < 7:
			f.mode = "twice"
		default:
			f.mode = "stopped"
		}
		bo, so := orders[f.buy], orders[f.sell]
		f.tr = trade(newID("x"), bo.holder, bo.hold, so.holder, so.hold, tmUSDT(f.usdt), tmBTC(f.btc))
		fills[i] = f
	}

	var mu sync.Mutex // guards the model while the schedule runs
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	note := func(f *tmFill, st engine.TransferState, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			f.seen = append(f.seen, "error:"+err.Error())
			return
		}
		f.seen = append(f.seen, st.Status)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	delay := func(max int) time.Duration { return time.Duration(rng.Intn(max)) * time.Millisecond }
	drive := func(f *tmFill, e *engine.Engine) {
		st, err := e.Transfer(ctx, f.tr)
		note(f, st, err)
	}
	for _, f := range fills {
		f := f
		switch f.mode {
		case "direct":
			d := delay(600)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				time.Sleep(d)
				drive(f, eng)
			}()
		case "whole":
			d, pause := delay(600), delay(100)
			bo, so := orders[f.buy], orders[f.sell]
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				time.Sleep(d)
				st, err := eng.State(ctx, bo.holder)
				if err != nil {
					problem("state of %s: %v", bo.holder, err)
					return
				}
				left := int64(0)
				if h, ok := st.Holds[bo.hold]; ok && h.Legs["USDT"] != "" {
					n, _ := instructions.ToUnits(h.Legs["USDT"], usdtScale)
					left = n / lotUnits["USDT"]
				}
				mu.Lock()
				if left == 0 {
					f.skipped = true
				} else {
					f.usdt = left
					f.tr = instructions.Transfer{ID: f.tr.ID, Parts: []instructions.Part{
						part(bo.holder, ops().Settle(bo.hold).Credit("BTC", tmBTC(f.btc))),
						part(so.holder, ops().SettleLeg(so.hold, "BTC", tmBTC(f.btc)).Credit("USDT", tmUSDT(left))),
					}}
				}
				tr := f.tr
				mu.Unlock()
				if left == 0 {
					return
				}
				// Its driver stops after the prepares for a while: fills
				// in flight on the order may be decided meanwhile.
				_ = eng.TransferStep(ctx, tr, "begin", 0)
				_ = eng.TransferStep(ctx, tr, "prepare", 0)
				_ = eng.TransferStep(ctx, tr, "prepare", 1)
				time.Sleep(pause)
				drive(f, eng)
			}()
		case "twice":
			d1, d2 := delay(600), delay(40)
			wg.Add(2)
			for _, d := range []time.Duration{d1, d1 + d2} {
				go func() {
					defer wg.Done()
					<-start
					time.Sleep(d)
					drive(f, eng)
				}()
			}
		case "stopped":
			d, beginner := delay(500), eng
			if rng.Intn(2) == 0 {
				beginner = short // recovery may abort it for want of a decision
			}
			steps := [][]int{{}, {0}, {1}, {0, 1}}[rng.Intn(4)]
			resume := -1 // left for the end (or for recovery)
			if rng.Intn(2) == 0 {
				resume = rng.Intn(800)
			}
			f.stoppedAfter = fmt.Sprintf("begin%v, resumed after %d ms", steps, resume)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				time.Sleep(d)
				if err := beginner.TransferStep(ctx, f.tr, "begin", 0); err != nil {
					problem("%s: begin: %v", f.tr.ID, err)
					return
				}
				for _, p := range steps {
					_ = beginner.TransferStep(ctx, f.tr, "prepare", p) // a rejection is the abort's business
				}
				if resume >= 0 {
					time.Sleep(time.Duration(resume) * time.Millisecond)
					drive(f, eng)
				}
			}()
		}
	}
	// Cancels and partial releases.
	mgmt := func(o *tmOrder, d time.Duration, in instructions.Instruction, whole bool, n int64) {
		defer wg.Done()
		<-start
		time.Sleep(d)
		res, err := eng.Apply(ctx, in)
		switch {
		case err == nil:
			mu.Lock()
			if whole {
				o.closedWhole = true
			} else {
				o.released += n
			}
			mu.Unlock()
			if whole {
				if _, open := res.Holds[o.hold]; open {
					problem("cancel of %s/%s: its result shows the hold open: %+v", o.holder, o.hold, res.Holds[o.hold])
				}
			}
		case errors.Is(err, engine.ErrHoldNotFound), !whole && errors.Is(err, engine.ErrExceedsHold):
		default:
			problem("release of %s/%s (whole %v): %v", o.holder, o.hold, whole, err)
		}
	}
	for c := 0; c < 3; c++ {
		o := orders[rng.Intn(len(orders))]
		wg.Add(1)
		go mgmt(o, delay(900), instructions.New(newID("cancel"), o.holder).Release(o.hold), true, 0)
	}
	for c := 0; c < 5; c++ {
		o := orders[rng.Intn(len(orders))]
		n := int64(1 + rng.Intn(3))
		amount := tmUSDT(n)
		if o.asset == "BTC" {
			amount = tmBTC(n)
		}
		wg.Add(1)
		go mgmt(o, delay(900), instructions.New(newID("part"), o.holder).ReleaseLeg(o.hold, o.asset, amount), false, n)
	}
	// The sweeper's work on expired orders, and recovery, while fills run.
	bg, stopBG := context.WithCancel(ctx)
	var bgWG sync.WaitGroup
	sweepExpired := func() {
		for _, o := range orders {
			if o.exp == 0 || time.Now().UnixMilli() < o.exp+20 {
				continue
			}
			_, err := eng.ReleaseExpired(ctx, o.holder, o.hold, o.exp)
			switch {
			case err == nil:
				mu.Lock()
				o.closedWhole = true
				mu.Unlock()
			case errors.Is(err, engine.ErrHoldNotFound):
			default:
				problem("sweep of %s/%s: %v", o.holder, o.hold, err)
			}
		}
	}
	// What the run went through: orders seen empty and kept open by a
	// count, and counts of two or more.
	var sawEmptyCounted, sawCount2 atomic.Int64
	bgWG.Add(3)
	go func() {
		defer bgWG.Done()
		for bg.Err() == nil {
			for _, h := range hs {
				m, err := rdb.HGetAll(ctx, cluster.Holder(h)).Result()
				if err != nil {
					continue
				}
				for f, v := range m {
					if !strings.HasPrefix(f, stored.PrefixHold+"ord-") {
						continue
					}
					if p := strings.Split(v, "|"); len(p) == 4 {
						if p[1] == "" {
							sawEmptyCounted.Add(1)
						}
						if p[3] != "1" {
							sawCount2.Add(1)
						}
					}
				}
			}
			time.Sleep(15 * time.Millisecond)
		}
	}()
	go func() {
		defer bgWG.Done()
		for bg.Err() == nil {
			sweepExpired()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	rec := engine.NewRecovery(short, nil)
	go func() {
		defer bgWG.Done()
		for bg.Err() == nil {
			_ = rec.Recover(bg)
			time.Sleep(tmRecoveryPeriod)
		}
	}()
	close(start)
	wg.Wait()
	stopBG()
	bgWG.Wait()
	require.Empty(t, problems)

	// Every fill decided and finished, by driving it again until it is.
	for _, f := range fills {
		if f.skipped {
			continue
		}
		var st engine.TransferState
		for try := 0; ; try++ {
			var err error
			st, err = eng.Transfer(ctx, f.tr)
			require.NoError(t, err, "fill %s", f.tr.ID)
			if st.Status != engine.TransferPending && st.Complete {
				break
			}
			require.Less(t, try, 20, "fill %s stays %s (complete %v)", f.tr.ID, st.Status, st.Complete)
			time.Sleep(50 * time.Millisecond)
		}
		f.final = st
		for _, s := range f.seen {
			if s == engine.TransferCommitted || s == engine.TransferAborted {
				assert.Equal(t, s, st.Status, "fill %s: a decision never changes (seen %v)", f.tr.ID, f.seen)
			}
		}
		got, err := eng.GetTransfer(ctx, f.tr.ID)
		require.NoError(t, err)
		assert.Equal(t, st.Status, got.Status, "fill %s: GetTransfer agrees", f.tr.ID)
		assert.True(t, got.Complete, "fill %s: GetTransfer says complete", f.tr.ID)
		if f.bad {
			assert.Equal(t, engine.TransferAborted, st.Status, "fill %s asks %s BTC of an order of %s", f.tr.ID,
				tmBTC(f.btc), tmBTC(orders[f.sell].initial))
		}
		if st.Status == engine.TransferAborted {
			require.NotNil(t, st.Error, "fill %s", f.tr.ID)
			assert.Contains(t, []instructions.Code{instructions.CodeExceedsHold, instructions.CodeHoldNotFound,
				instructions.CodeHoldExpired, instructions.CodeUnavailable}, st.Error.Code, "fill %s: %+v", f.tr.ID, st.Error)
		}
	}

	// The model, from the outcomes.
	committedFrom := make([]int64, len(orders))
	out := map[string]map[string]int64{} // holder -> asset -> lots in (+) or out (-) by committed fills
	for _, h := range hs {
		out[h] = map[string]int64{}
	}
	nCommitted, nAborted := 0, 0
	for _, f := range fills {
		if f.skipped {
			continue
		}
		if f.final.Status != engine.TransferCommitted {
			nAborted++
			continue
		}
		nCommitted++
		bo, so := orders[f.buy], orders[f.sell]
		committedFrom[f.buy] += f.usdt
		if f.mode == "whole" {
			bo.closedWhole = true // settled whole: closed at its commit
		}
		committedFrom[f.sell] += f.btc
		out[bo.holder]["USDT"] -= f.usdt
		out[bo.holder]["BTC"] += f.btc
		out[so.holder]["BTC"] -= f.btc
		out[so.holder]["USDT"] += f.usdt
	}
	nClosed := 0
	for _, o := range orders {
		if o.closedWhole {
			nClosed++
		}
	}
	codes := map[instructions.Code]int{}
	for _, f := range fills {
		if f.final.Status == engine.TransferAborted && f.final.Error != nil {
			codes[f.final.Error.Code]++
		}
	}
	t.Logf("%d fills committed, %d aborted %v; %d orders cancelled or swept; samples of an empty counted order %d, of a count of 2 or more %d",
		nCommitted, nAborted, codes, nClosed, sawEmptyCounted.Load(), sawCount2.Load())

	check := func(when string, expiredGone bool) {
		t.Helper()
		frozen := map[string]map[string]int64{}
		for _, h := range hs {
			frozen[h] = map[string]int64{}
		}
		states := map[string]instructions.State{}
		for _, h := range hs {
			states[h] = state(t, h)
			for name := range states[h].Holds {
				raw := rawHoldOf(t, h, name)
				assert.NotRegexp(t, `^[0-9]*\|[^|]*\|[^|]*\|`, raw,
					"%s: %s/%s keeps a count of takes with every transfer decided", when, h, name)
			}
		}
		for i, o := range orders {
			hold, open := states[o.holder].Holds[o.hold]
			left := o.initial - committedFrom[i] - o.released
			what := fmt.Sprintf("%s: order %s/%s (%s, initial %d lots, committed %d, released %d, closed whole %v, ttl %v)",
				when, o.holder, o.hold, o.asset, o.initial, committedFrom[i], o.released, o.closedWhole, o.ttl)
			assert.GreaterOrEqual(t, left, int64(0), "%s: more left the order than it held", what)
			if o.closedWhole || expiredGone && o.exp > 0 || left == 0 {
				assert.False(t, open, "%s: closed (holds %+v)", what, hold.Legs)
				continue
			}
			if assert.True(t, open, "%s: open with %d lots", what, left) {
				assert.Equal(t, map[string]int64{o.asset: left}, map[string]int64{o.asset: lots(o.asset, hold.Legs[o.asset])},
					"%s: what it holds", what)
				assert.Len(t, hold.Legs, 1, what)
				frozen[o.holder][o.asset] += left
			}
		}
		for _, h := range hs {
			start := map[string]int64{}
			if slices.Contains(buyers, h) {
				start["USDT"] = tmBuyerUSDT / 10
			} else {
				start["BTC"] = tmSellerBTCLots
			}
			for _, a := range []string{"USDT", "BTC"} {
				total := start[a] + out[h][a]
				b := states[h].Balances[a]
				if b.Available == "" && total == 0 {
					continue
				}
				assert.Equal(t, total-frozen[h][a], lots(a, b.Available), "%s: %s available %s", when, h, a)
				assert.Equal(t, frozen[h][a], lots(a, b.Frozen), "%s: %s frozen %s", when, h, a)
			}
		}
		assert.Equal(t, before, totals(t, hs...), "%s: money is conserved per asset", when)
	}
	check("every fill decided", false)

	// Then the sweeper releases the expired orders still open.
	var last int64
	for _, o := range orders {
		last = max(last, o.exp)
	}
	time.Sleep(time.Until(time.UnixMilli(last + 50)))
	sweepExpired()
	check("expired orders swept", true)
}

func pow10(n int32) int64 {
	p := int64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

// TestTradingModel_WholeOrderFillsInTheMix is the model test with fills
// that settle their buyer's order whole among the others: such an order
// ends closed, whichever of its fills abort and when.
func TestTradingModel_WholeOrderFillsInTheMix(t *testing.T) {
	runTradingModel(t, true)
}
