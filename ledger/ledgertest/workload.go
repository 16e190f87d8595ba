// Package ledgertest generates random instruction workloads for the tests of
// the ledger, the relay and the reconciler: every op of the contract, on a
// set of holders, mostly valid (a rough model of each holder keeps most
// debits, settles and coupon ops meaningful) and sometimes rejected.
package ledgertest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/atomledger/atomledger/instructions"
)

// Workload makes random instructions. It is not safe for concurrent use.
type Workload struct {
	rnd     *rand.Rand
	prefix  string
	n       int
	Holders []string
	holds   map[string][]string // holder -> holds it may have open
	coupons map[string][]string // holder -> coupons it was granted
}

// New builds a workload over holders named prefix-0 .. prefix-(holders-1).
func New(seed uint64, prefix string, holders int) *Workload {
	w := &Workload{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), prefix: prefix,
		holds: map[string][]string{}, coupons: map[string][]string{}}
	for i := range holders {
		w.Holders = append(w.Holders, fmt.Sprintf("%s-%d", prefix, i))
	}
	return w
}

// Opens gives the instructions that open every holder with some funds.
func (w *Workload) Opens() []instructions.Instruction {
	out := make([]instructions.Instruction, len(w.Holders))
	for i, h := range w.Holders {
		out[i] = instructions.New("open-"+h, h).Open().Credit("CNY", "1000.00").Credit("USDT", "500").EarnPoints("5000").
			WithCounterparty("bank")
	}
	return out
}

// Next makes one random instruction for a random holder.
func (w *Workload) Next() instructions.Instruction {
	w.n++
	h := w.Holders[w.rnd.IntN(len(w.Holders))]
	in := instructions.New(w.prefix+"-i"+strconv.Itoa(w.n), h)
	if w.rnd.IntN(3) == 0 {
		in = in.WithCounterparty([]string{"merchant:1", "merchant:2", "exchange"}[w.rnd.IntN(3)])
	}
	if w.rnd.IntN(4) == 0 {
		in = in.WithMemo("random " + strconv.Itoa(w.n))
	}
	for range 1 + w.rnd.IntN(3) {
		in = w.op(in, h)
	}
	return in
}

func (w *Workload) amount(max int) string {
	return fmt.Sprintf("%d.%02d", w.rnd.IntN(max), 1+w.rnd.IntN(99))
}

func (w *Workload) op(in instructions.Instruction, h string) instructions.Instruction {
	asset := []string{"CNY", "USDT"}[w.rnd.IntN(2)]
	switch w.rnd.IntN(12) {
	case 0, 1:
		return in.Credit(asset, w.amount(100))
	case 2:
		return in.Debit(asset, w.amount(50))
	case 3:
		hold := "hd" + strconv.Itoa(w.n)
		w.holds[h] = append(w.holds[h], hold)
		var ttl time.Duration
		if w.rnd.IntN(4) == 0 {
			ttl = time.Hour
		}
		in = in.Freeze(asset, w.amount(30), hold, ttl)
		if w.rnd.IntN(2) == 0 {
			in = in.FreezePoints(strconv.Itoa(1+w.rnd.IntN(100)), hold)
		}
		if cs := w.coupons[h]; len(cs) > 0 && w.rnd.IntN(2) == 0 {
			in = in.LockCoupon(cs[w.rnd.IntN(len(cs))], hold)
		}
		return in
	case 4, 5:
		hs := w.holds[h]
		if len(hs) == 0 {
			return in.EarnPoints(strconv.Itoa(1 + w.rnd.IntN(500)))
		}
		hold := hs[w.rnd.IntN(len(hs))]
		switch w.rnd.IntN(4) {
		case 0:
			return in.Settle(hold)
		case 1:
			return in.Release(hold)
		case 2:
			return in.SettleLeg(hold, asset, "0.01")
		default:
			return in.ReleaseLeg(hold, "points", "")
		}
	case 6:
		return in.EarnPoints(strconv.Itoa(1 + w.rnd.IntN(500)))
	case 7:
		return in.SpendPoints(strconv.Itoa(1 + w.rnd.IntN(300)))
	case 8:
		c := "c" + strconv.Itoa(w.n)
		w.coupons[h] = append(w.coupons[h], c)
		var exp time.Time
		if w.rnd.IntN(3) == 0 {
			exp = time.Now().Add(24 * time.Hour)
		}
		return in.GrantCoupon(c, exp)
	case 9:
		if cs := w.coupons[h]; len(cs) > 0 {
			return in.RedeemCoupon(cs[w.rnd.IntN(len(cs))])
		}
		return in.Credit(asset, "1")
	case 10:
		if w.rnd.IntN(8) == 0 {
			return in.Suspend()
		}
		return in.Resume()
	default:
		return in.Debit(asset, w.amount(5))
	}
}
