package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// Amounts of the fixtures: large enough that no part runs out.
const (
	richCNY    = "10000000.00"
	richUSDT   = "10000000.000000"
	richPoints = "100000000"
)

// holderIDs names n new holders of this run, distinct across calls by kind
// and by a counter.
func (e *env) holderIDs(kind string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.prefix + "-" + kind + "-" + strconv.Itoa(i)
	}
	return ids
}

// holderIDsWhere names n new holders whose slot passes keep.
func (e *env) holderIDsWhere(kind string, n int, keep func(slot int) bool) []string {
	ids := make([]string, 0, n)
	for i := 0; len(ids) < n; i++ {
		id := e.prefix + "-" + kind + "-" + strconv.Itoa(i)
		if keep(cluster.HolderSlot(id)) {
			ids = append(ids, id)
		}
	}
	return ids
}

// applyAll applies ins in batches of setupBatch, setupWorkers batches at a
// time, and fails on the first instruction that did not apply.
func (e *env) applyAll(ctx context.Context, ins []instructions.Instruction) error {
	const setupBatch, setupWorkers = 250, 4
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan []instructions.Instruction)
	)
	for range setupWorkers {
		wg.Go(func() {
			for chunk := range next {
				for _, o := range e.eng.ApplyBatch(ctx, chunk) {
					if o.Err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = o.Err
						}
						mu.Unlock()
					}
				}
			}
		})
	}
	for lo := 0; lo < len(ins); lo += setupBatch {
		next <- ins[lo:min(lo+setupBatch, len(ins))]
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("set up holders: %w", firstErr)
	}
	return nil
}

// openRich opens each holder with plenty of CNY, USDT and points and one
// available coupon c-1: what a checkout takes.
func openRich(id string) instructions.Instruction {
	return instructions.New("open", id).Open().
		Credit("CNY", richCNY).Credit("USDT", richUSDT).EarnPoints(richPoints).
		GrantCoupon("c-1", time.Now().Add(30*24*time.Hour))
}

// checkout is the "checkout" instruction: debit CNY, spend points,
// redeem a coupon and freeze USDT under a new hold, with its idempotency
// record and outbox event.
// oneDebit is the 1-op instruction script_cost.debit_ratio measures.
func oneDebit(holder string, n int) instructions.Instruction {
	return instructions.New("debit-"+strconv.Itoa(n), holder).Debit("CNY", "80.00")
}

func checkout(holder string, n int) instructions.Instruction {
	return checkoutWith("checkout-"+strconv.Itoa(n), holder, n, "c-1")
}

// checkoutWith is checkout with its id and the coupon it redeems.
func checkoutWith(id, holder string, n int, coupon string) instructions.Instruction {
	order := "ord-" + strconv.Itoa(n)
	return instructions.New(id, holder).
		WithCounterparty("merchant:88").WithMemo("checkout order "+strconv.Itoa(n)).
		Debit("CNY", "80.00").
		SpendPoints("2000").
		RedeemCoupon(coupon).
		Freeze("USDT", "100.000000", order, 15*time.Minute)
}

// checkoutJSON is checkout as the JSON door takes it: amounts in minor
// units (CNY has 2 decimals, USDT 6), the TTL in ms.
func checkoutJSON(holder string, n int) string {
	i := strconv.Itoa(n)
	return `{"id":"checkout-` + i + `","holder":"` + holder + `","counterparty":"merchant:88","memo":"checkout order ` + i + `","ops":[` +
		`{"op":"debit","asset":"CNY","amount":"8000"},{"op":"spend_points","amount":"2000"},` +
		`{"op":"redeem_coupon","coupon":"c-1"},{"op":"freeze","asset":"USDT","amount":"100000000","hold":"ord-` + i + `","ttl_ms":900000}]}`
}

// debit is the one-op payment of the load parts.
func debit(id, holder string) instructions.Instruction {
	return instructions.New(id, holder).Debit("CNY", "0.01")
}

// typical is a typical trading holder: two assets, points, two coupons and
// one open hold (with its entry in the slot's expiry index).
func typical(id string) instructions.Instruction {
	exp := time.Now().Add(30 * 24 * time.Hour)
	return instructions.New("open", id).Open().
		Credit("CNY", "1250.00").Credit("USDT", "830.500000").EarnPoints("4200").
		GrantCoupon("c-1", exp).GrantCoupon("c-2", exp).
		Freeze("USDT", "100.000000", "ord-1", time.Hour)
}

// loadSet is the holders and instructions the pipeline, concurrent and http
// parts share: LoadHolders rich holders, and a counter for fresh ids.
type loadSet struct {
	holders []string
	mu      sync.Mutex
	next    int
}

func newLoadSet(ctx context.Context, e *env, part string) (*loadSet, error) {
	e.step(part, 0, 1, "opening holders")
	ids := e.holderIDs("load", e.s.LoadHolders)
	ins := make([]instructions.Instruction, len(ids))
	for i, id := range ids {
		ins[i] = instructions.New("open", id).Open().Credit("CNY", richCNY)
	}
	if err := e.applyAll(ctx, ins); err != nil {
		return nil, err
	}
	return &loadSet{holders: ids}, nil
}

// debits builds n debits with fresh ids, round robin over the holders.
func (l *loadSet) debits(n int) []instructions.Instruction {
	l.mu.Lock()
	first := l.next
	l.next += n
	l.mu.Unlock()
	ins := make([]instructions.Instruction, n)
	for i := range ins {
		k := first + i
		ins[i] = debit("pay-"+strconv.Itoa(k), l.holders[k%len(l.holders)])
	}
	return ins
}

// step reports progress.
func (e *env) step(part string, done, total int, note string) {
	if e.opt.Progress != nil {
		e.opt.Progress(Step{Part: part, Done: done, Total: total, Note: note})
	}
}
