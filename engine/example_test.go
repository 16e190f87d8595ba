package engine_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// exampleClient is the cluster of TestMain; a program builds its own:
//
//	rdb := redis.NewClusterClient(&redis.ClusterOptions{
//		Addrs:                 []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
//		ContextTimeoutEnabled: true,
//	})
func exampleClient() redis.UniversalClient { return rdb }

func Example() {
	ctx := context.Background()
	eng := engine.New(exampleClient(), &engine.Options{
		Assets:         instructions.MustParseAssets("CNY:2,USDT:6,BTC:8"),
		IdempotencyTTL: 24 * time.Hour,
	})
	holder := newID("u1001")

	// Open a holder with money, points and a coupon.
	_, err := eng.Apply(ctx, instructions.New("welcome", holder).
		Open().Credit("CNY", "200.00").EarnPoints("5000").GrantCoupon("c-9", time.Time{}))
	if err != nil {
		panic(err)
	}

	// Checkout: money, points and a coupon in one atomic step.
	res, err := eng.Apply(ctx, instructions.New("order-55-pay", holder).WithCounterparty("merchant:88").
		Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-9"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Seq, res.Balances["CNY"].Available, res.Points.Available, res.Coupons["c-9"])

	// A double click sends the same instruction again: nothing changes.
	again, _ := eng.Apply(ctx, instructions.New("order-55-pay", holder).WithCounterparty("merchant:88").
		Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-9"))
	fmt.Println(again.Replayed, again.Balances["CNY"].Available)

	// A rejection is an *engine.Error with a stable code.
	_, err = eng.Apply(ctx, instructions.New("order-56-pay", holder).Debit("CNY", "500.00"))
	var e *engine.Error
	if errors.As(err, &e) && errors.Is(err, engine.ErrInsufficientFunds) {
		fmt.Println(e.Code, e.OpIndex, e.Message)
	}
	// Output:
	// 2 120.00 3000 used
	// true 120.00
	// INSUFFICIENT_FUNDS 0 debit 500.00 CNY: available 120.00
}

// A trading backend freezes funds when an order is placed, settles each
// partial fill, and releases the rest on cancel.
func ExampleEngine_Apply_trading() {
	ctx := context.Background()
	eng := engine.New(exampleClient(), nil)
	trader := newID("trader")
	must := func(res instructions.Result, err error) instructions.Result {
		if err != nil {
			panic(err)
		}
		return res
	}
	must(eng.Apply(ctx, instructions.New("deposit-1", trader).Open().Credit("USDT", "1000")))
	res := must(eng.Apply(ctx, instructions.New("order-1-place", trader).Freeze("USDT", "300", "order-1", time.Hour)))
	fmt.Println("placed:", res.Balances["USDT"].Available, res.Balances["USDT"].Frozen)
	res = must(eng.Apply(ctx, instructions.New("order-1-fill-1", trader).WithCounterparty("market").SettleLeg("order-1", "USDT", "120")))
	fmt.Println("filled:", res.Holds["order-1"].Legs["USDT"])
	res = must(eng.Apply(ctx, instructions.New("order-1-cancel", trader).Release("order-1")))
	fmt.Println("cancelled:", res.Balances["USDT"].Available, res.Balances["USDT"].Frozen, len(res.Holds))
	// Output:
	// placed: 700.000000 300.000000
	// filled: 180.000000
	// cancelled: 880.000000 0.000000 0
}

func ExampleEngine_ApplyBatch() {
	ctx := context.Background()
	eng := engine.New(exampleClient(), nil)
	a, b := newID("a"), newID("b")
	out := eng.ApplyBatch(ctx, []instructions.Instruction{
		instructions.New("open-a", a).Open().Credit("CNY", "10"),
		instructions.New("open-b", b).Open(),
		instructions.New("pay-b", b).Debit("CNY", "1"), // b has nothing
		instructions.New("bad", a).Debit("CNY", "1.001"),
	})
	for _, o := range out {
		if o.Err != nil {
			fmt.Println("error:", o.Err.(*engine.Error).Code)
			continue
		}
		fmt.Println("seq:", o.Result.Seq)
	}
	// Output:
	// seq: 1
	// seq: 1
	// error: INSUFFICIENT_FUNDS
	// error: INVALID_AMOUNT
}

// A trade settles a buyer and a seller, whose keys live on different
// shards, all or nothing: each pays out of its order's hold and is credited
// what the other pays.
func ExampleEngine_Transfer() {
	ctx := context.Background()
	eng := engine.New(exampleClient(), nil)
	buyer, seller := newID("buyer"), newID("seller")
	for _, in := range []instructions.Instruction{
		instructions.New("open", buyer).Open().Credit("USDT", "1000").Freeze("USDT", "500", "ord-1", 0),
		instructions.New("open", seller).Open().Credit("BTC", "0.01").Freeze("BTC", "0.01", "ord-7", 0),
	} {
		if _, err := eng.Apply(ctx, in); err != nil {
			panic(err)
		}
	}
	fill := func(id, usdt, btc string) {
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
			{Holder: buyer, Ops: instructions.New("", "").SettleLeg("ord-1", "USDT", usdt).Credit("BTC", btc).Ops},
			{Holder: seller, Ops: instructions.New("", "").SettleLeg("ord-7", "BTC", btc).Credit("USDT", usdt).Ops},
		}})
		if err != nil {
			panic(err)
		}
		if st.Error != nil {
			fmt.Println(st.Status, st.Error.Code, "in part", *st.PartIndex)
			return
		}
		fmt.Println(st.Status, st.Complete)
	}
	fill(newID("fill"), "100", "0.002")
	fill(newID("fill"), "400", "0.009") // the seller's order has 0.008 left
	b, _ := eng.State(ctx, buyer)
	fmt.Println("buyer:", b.Holds["ord-1"].Legs["USDT"], b.Balances["BTC"].Available)
	// Output:
	// committed true
	// aborted EXCEEDS_HOLD in part 1
	// buyer: 400.000000 0.00200000
}

// A client whose request timed out learns what happened by the id it sent,
// without sending the instruction again.
func ExampleEngine_Outcome() {
	ctx := context.Background()
	eng := engine.New(exampleClient(), nil)
	holder := newID("u1002")
	if _, err := eng.Apply(ctx, instructions.New("welcome", holder).Open().Credit("CNY", "50.00")); err != nil {
		panic(err)
	}
	_, _ = eng.Apply(ctx, instructions.New("order-57-pay", holder).Debit("CNY", "80.00"))

	for _, id := range []string{"welcome", "order-57-pay", "order-58-pay"} {
		o, err := eng.Outcome(ctx, holder, id)
		switch {
		case errors.Is(err, engine.ErrInstructionNotFound):
			fmt.Println(id, "unknown: never sent, or forgotten after the idempotency TTL")
		case err != nil:
			fmt.Println(id, "retry later:", err) // UNAVAILABLE
		case o.Err != nil:
			fmt.Println(id, "rejected:", o.Err.(*engine.Error).Code)
		default:
			fmt.Println(id, "applied at seq", o.Result.Seq, "leaving", o.Result.Balances["CNY"].Available)
		}
	}
	// Output:
	// welcome applied at seq 1 leaving 50.00
	// order-57-pay rejected: INSUFFICIENT_FUNDS
	// order-58-pay unknown: never sent, or forgotten after the idempotency TTL
}
