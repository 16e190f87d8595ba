package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The transfer part prices a cross-holder transfer against a plain
// instruction, for a trade (two payers: the two phases) and a payment (one
// payer). A trade is a two-part transfer: the buyer settles USDT from
// its order's hold and is credited BTC, the seller settles BTC from its
// order's hold and is credited USDT. The single side is one half of it, the
// buyer's settle and credit, as one Apply. Both run on Workers goroutines
// for Transfer each, in alternated phases of LoadRounds rounds, over pairs
// whose seller lives on another master than its buyer where there are
// several: what a transfer costs is mostly its round trips to three
// masters, and pairs on one master would hide some of them.

// Order holds and trade sizes: the holds are large enough that no run
// empties them (a settle from an emptied hold would be refused).
const (
	buyHold   = "ord-buy"
	sellHold  = "ord-sell"
	buyUSDT   = "5000000.000000"
	sellBTC   = "1000.00000000"
	tradeUSDT = "10.000000"
	tradeBTC  = "0.00010000"
)

// pairsPerWorker sizes the pairs: with round robin over several times as
// many pairs as workers, the transfers in flight at once almost never share
// a holder, so the part measures the protocol's cost, not waits on a hot
// holder (contention measures those).
const pairsPerWorker = 4

// tradePair is a buyer and a seller with their order holds open.
type tradePair struct{ buyer, seller string }

// openBuyer and openSeller open the two sides of a pair with their order
// holds; the holds live a day, longer than any run.
func openBuyer(id string) instructions.Instruction {
	return instructions.New("open", id).Open().Credit("USDT", richUSDT).Freeze("USDT", buyUSDT, buyHold, 24*time.Hour)
}

func openSeller(id string) instructions.Instruction {
	return instructions.New("open", id).Open().Credit("BTC", sellBTC).Freeze("BTC", sellBTC, sellHold, 24*time.Hour)
}

// trade is one fill between the pair, as a transfer.
func trade(id string, p tradePair) instructions.Transfer {
	var buyer, seller instructions.Instruction
	return instructions.Transfer{ID: id, Parts: []instructions.Part{
		{Holder: p.buyer, Ops: buyer.SettleLeg(buyHold, "USDT", tradeUSDT).Credit("BTC", tradeBTC).Ops},
		{Holder: p.seller, Ops: seller.SettleLeg(sellHold, "BTC", tradeBTC).Credit("USDT", tradeUSDT).Ops},
	}}
}

// payment is a P2P payment between the pair, a transfer with one payer
// (docs/transfers.md, One payer): the buyer pays the seller USDT from its
// available balance.
func payment(id string, p tradePair) instructions.Transfer {
	var buyer, seller instructions.Instruction
	return instructions.Transfer{ID: id, Parts: []instructions.Part{
		{Holder: p.buyer, Ops: buyer.Debit("USDT", tradeUSDT).Ops},
		{Holder: p.seller, Ops: seller.Credit("USDT", tradeUSDT).Ops},
	}}
}

// tradeSide is the buyer's half of a trade as one instruction: the same
// work on one holder, without the protocol that makes two holders agree.
func tradeSide(id, buyer string) instructions.Instruction {
	return instructions.New(id, buyer).SettleLeg(buyHold, "USDT", tradeUSDT).Credit("BTC", tradeBTC)
}

// tradePairs opens n pairs. Each seller is the next candidate id on another
// master than its buyer, when one turns up within a few tries (on a plain
// server none does); cross counts the pairs that span two masters.
func (e *env) tradePairs(ctx context.Context, n int) (pairs []tradePair, cross int, err error) {
	masterOf, err := e.slotMasters(ctx)
	if err != nil {
		return nil, 0, err
	}
	var ins []instructions.Instruction
	next := 0
	for _, b := range e.holderIDs("buyer", n) {
		home := masterOf(cluster.HolderSlot(b))
		var s string
		for try := 0; try < 20; try++ {
			s = e.prefix + "-seller-" + strconv.Itoa(next)
			next++
			if masterOf(cluster.HolderSlot(s)) != home {
				cross++
				break
			}
		}
		pairs = append(pairs, tradePair{buyer: b, seller: s})
		ins = append(ins, openBuyer(b), openSeller(s))
	}
	return pairs, cross, e.applyAll(ctx, ins)
}

func runTransfer(ctx context.Context, e *env) (Transfer, error) {
	const part = "transfer"
	rounds, d := e.s.LoadRounds, e.s.TransferDur
	out := Transfer{Workers: e.s.Workers, Rounds: rounds, Seconds: d.Seconds()}
	e.step(part, 0, rounds, "opening holders")
	pairs, cross, err := e.tradePairs(ctx, pairsPerWorker*e.s.Workers)
	if err != nil {
		return out, err
	}
	out.Pairs, out.CrossMaster = len(pairs), cross
	holders := &loadSet{}
	for _, p := range pairs {
		holders.holders = append(holders.holders, p.buyer, p.seller)
	}

	// Every call runs to its end with a context of its own: one cut short
	// would leave a transfer pending and the sums off.
	bg := context.WithoutCancel(ctx)
	var seq atomic.Int64
	pick := func() (int64, tradePair) {
		k := seq.Add(1)
		return k, pairs[k%int64(len(pairs))]
	}
	var lat []float64 // ms, every trade of every phase
	var tRates, pRates, sRates, ratios, pRatios, tUsec, pUsec, sUsec []float64
	// transfers runs one phase of transfers made by mk and checks that money
	// is conserved over it; it answers the rate and the servers' usec per
	// committed transfer.
	transfers := func(mk func(string, tradePair) instructions.Transfer, lat *[]float64) (float64, float64, error) {
		before, err := e.sums(ctx, holders.holders)
		if err != nil {
			return 0, 0, err
		}
		// After the sums: State reads through a script too.
		if err := e.resetStats(ctx); err != nil {
			return 0, 0, err
		}
		var committed, aborted atomic.Int64
		var ec errCount
		perWorker := make([][]float64, e.s.Workers)
		took := hammer(e.s.Workers, d, func(w int) {
			n, p := pick()
			start := time.Now()
			st, err := e.eng.Transfer(bg, mk(e.prefix+"-t-"+strconv.FormatInt(n, 10), p))
			perWorker[w] = append(perWorker[w], float64(time.Since(start))/float64(time.Millisecond))
			if err == nil && (st.Status != engine.TransferCommitted || !st.Complete) {
				err = fmt.Errorf("transfer %s: %s, complete %v, error %v", st.ID, st.Status, st.Complete, st.Error)
			}
			if err != nil {
				aborted.Add(1)
				ec.add(err)
				return
			}
			committed.Add(1)
		})
		usec, err := e.scriptUsec(ctx)
		if err != nil {
			return 0, 0, err
		}
		if lat != nil {
			for _, l := range perWorker {
				*lat = append(*lat, l...)
			}
		}
		if n, first := ec.result(); n > 0 {
			fmt.Fprintf(e.log, "transfer: %d not committed, first: %v\n", n, first)
		}
		after, err := e.sums(ctx, holders.holders)
		if err != nil {
			return 0, 0, err
		}
		if !maps.Equal(before, after) {
			return 0, 0, fmt.Errorf("money not conserved over the %d holders of the pairs: available+frozen per asset was %v, is %v",
				len(holders.holders), before, after)
		}
		out.Transfers += committed.Load()
		out.Aborted += aborted.Load()
		return float64(committed.Load()) / took.Seconds(), usec / float64(committed.Load()), nil
	}
	for r := range rounds {
		kinds := []string{"transfer", "payment", "single"}
		if r%2 == 1 {
			slices.Reverse(kinds)
		}
		var tr, pr, sr float64
		for _, k := range kinds {
			if err := e.dropOutboxes(ctx, holders); err != nil {
				return out, err
			}
			switch k {
			case "single":
				if err := e.resetStats(ctx); err != nil {
					return out, err
				}
				var ok atomic.Int64
				var ec errCount
				took := hammer(e.s.Workers, d, func(int) {
					n, p := pick()
					_, err := e.eng.Apply(bg, tradeSide("side-"+strconv.FormatInt(n, 10), p.buyer))
					if err == nil {
						ok.Add(1)
					}
					ec.add(err)
				})
				if n, err := ec.result(); err != nil {
					return out, fmt.Errorf("single phase: %d failed, first: %w", n, err)
				}
				usec, err := e.scriptUsec(ctx)
				if err != nil {
					return out, err
				}
				sr = float64(ok.Load()) / took.Seconds()
				sRates = append(sRates, sr)
				sUsec = append(sUsec, usec/float64(ok.Load()))
				out.Singles += ok.Load()
			case "payment":
				rate, usec, err := transfers(payment, nil)
				if err != nil {
					return out, err
				}
				pr = rate
				pRates, pUsec = append(pRates, rate), append(pUsec, usec)
			default:
				rate, usec, err := transfers(trade, &lat)
				if err != nil {
					return out, err
				}
				tr = rate
				tRates, tUsec = append(tRates, rate), append(tUsec, usec)
			}
		}
		ratios, pRatios = append(ratios, ratio(tr, sr)), append(pRatios, ratio(pr, sr))
		e.step(part, r+1, rounds, "")
	}
	for i := range tRates {
		out.Phases = append(out.Phases, round(tRates[i]))
		out.PaymentPhases = append(out.PaymentPhases, round(pRates[i]))
		out.SinglePhases = append(out.SinglePhases, round(sRates[i]))
	}
	out.PerSec = round(median(tRates))
	out.PaymentPerSec = round(median(pRates))
	out.SinglePerSec = round(median(sRates))
	out.Ratio = round(median(ratios))
	out.PaymentRatio = round(median(pRatios))
	out.ServerUsec = round(median(tUsec))
	out.PaymentServerUsec = round(median(pUsec))
	out.SingleServerUsec = round(median(sUsec))
	slices.Sort(lat)
	out.P50Ms = round(percentile(lat, 50))
	out.P99Ms = round(percentile(lat, 99))
	return out, nil
}

// scriptUsec is the servers' time in runs of the library's functions
// (FCALL) since their statistics were reset, summed over the masters.
func (e *env) scriptUsec(ctx context.Context) (float64, error) {
	st, err := e.commandStats(ctx)
	return float64(st["fcall"].Usec), err
}

// sums reads every holder and adds up available+frozen per asset, in minor
// units. A transfer's reservation sits in frozen (its hold) until the
// commit, so a transfer left half done shows as a difference.
func (e *env) sums(ctx context.Context, holders []string) (map[string]int64, error) {
	var mu sync.Mutex
	var ec errCount
	total := map[string]int64{}
	parallel(16, len(holders), func(i int) {
		st, err := e.eng.State(ctx, holders[i])
		if err != nil {
			ec.add(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for a, b := range st.Balances {
			for _, v := range []string{b.Available, b.Frozen} {
				u, err := units(v)
				ec.add(err)
				total[a] += u
			}
		}
	})
	if _, err := ec.result(); err != nil {
		return nil, fmt.Errorf("read holders: %w", err)
	}
	return total, nil
}

// units reads an amount of a holder's state as minor units. State writes
// every amount of an asset with exactly its scale's digits, so dropping the
// point gives the units; instructions.ToUnits would refuse the zeros.
func units(amount string) (int64, error) {
	u, err := strconv.ParseInt(strings.Replace(amount, ".", "", 1), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", amount, err)
	}
	return u, nil
}
