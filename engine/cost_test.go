package engine

import (
	"testing"
	"time"

	"github.com/atomledger/atomledger/instructions"
)

// The engine's own work per call, without Redis: encoding an instruction
// and reading the script's reply. The Redis benchmarks in internal/bench
// measure the same work together with the round trip.

func costCheckout() instructions.Instruction {
	return instructions.New("checkout-55", "u1001").
		WithCounterparty("merchant:88").WithMemo("checkout order 55").
		Debit("CNY", "80.00").
		SpendPoints("2000").
		RedeemCoupon("c-1").
		Freeze("USDT", "100.000000", "ord-55", 15*time.Minute)
}

// What the apply function answers to the checkout of a rich holder.
const costCheckoutReply = "ok\n" + `{"s":"2","st":"active","b":{"CNY":["99992000","0"],"USDT":["999900000000","100000000"]},` +
	`"p":["98000","0"],"c":{"c-1":"used|1799000000000"},"h":{"ord-55":"1796000900000|USDT=100000000|"}}`

func BenchmarkPrepare_Checkout(b *testing.B) {
	e := New(nil, nil)
	in := costCheckout()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.prepare(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseReply_Checkout(b *testing.B) {
	e := New(nil, nil)
	c, err := e.prepare(costCheckout())
	if err != nil {
		b.Fatal(err)
	}
	reply := []any{int64(0), costCheckoutReply}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.parseReply(c.n, reply); err != nil {
			b.Fatal(err)
		}
	}
}
