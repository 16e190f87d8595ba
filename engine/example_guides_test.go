package engine_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// A trading backend (docs/guides/trading.md): orders freeze what they may
// spend, each partial fill is a transfer that pays the seller and the fee
// account, a cancel releases the rest, and an expired order's hold is swept.
func Example_trading() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eng := engine.New(exampleClient(), &engine.Options{Assets: instructions.MustParseAssets("USDT:6,BTC:8")})
	buyer, seller, fees := newID("buyer"), newID("seller"), newID("fees")
	apply := func(in instructions.Instruction) instructions.Result {
		res, err := eng.Apply(ctx, in)
		if err != nil {
			log.Fatal(err)
		}
		return res
	}
	apply(instructions.New("deposit-1", buyer).Open().Credit("USDT", "1000"))
	apply(instructions.New("deposit-1", seller).Open().Credit("BTC", "0.05"))
	apply(instructions.New("open", fees).Open())

	// Placing an order freezes what it may spend, under a hold named after it.
	res := apply(instructions.New("order-1-place", buyer).Freeze("USDT", "300", "order-1", 24*time.Hour))
	fmt.Println("buy order placed:", res.Balances["USDT"].Available, "available,", res.Balances["USDT"].Frozen, "frozen")
	apply(instructions.New("order-7-place", seller).Freeze("BTC", "0.01", "order-7", 24*time.Hour))

	// Each fill is one transfer over three holders, all parts or none: the
	// buyer pays USDT out of its order and receives BTC, the seller pays BTC
	// out of its order and receives the USDT less the fee, the fee account
	// receives the fee.
	fill := func(id, btc, usdt, proceeds, fee string) {
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
			{Holder: buyer, Ops: instructions.New("", "").SettleLeg("order-1", "USDT", usdt).Credit("BTC", btc).Ops},
			{Holder: seller, Ops: instructions.New("", "").SettleLeg("order-7", "BTC", btc).Credit("USDT", proceeds).Ops},
			{Holder: fees, Ops: instructions.New("", "").Credit("USDT", fee).Ops},
		}})
		if err != nil {
			log.Fatal(err) // refused before Redis, or UNAVAILABLE: send it again with the same id
		}
		if st.Error != nil {
			fmt.Println("fill", st.Status+":", st.Error.Code, "in part", *st.PartIndex)
			return
		}
		fmt.Println("fill", st.Status)
	}
	fill(newID("fill"), "0.002", "100", "99.9", "0.1")
	fill(newID("fill"), "0.001", "50", "49.95", "0.05")
	fill(newID("fill"), "0.004", "200", "199.8", "0.2") // more than the buy order has left

	// Cancelling the buy order releases what it has left.
	apply(instructions.New("order-1-cancel", buyer).Release("order-1"))
	state := func(holder string) instructions.State {
		st, err := eng.State(ctx, holder)
		if err != nil {
			log.Fatal(err)
		}
		return st
	}
	b := state(buyer)
	fmt.Println("buyer:", b.Balances["USDT"].Available, "USDT,", b.Balances["BTC"].Available, "BTC, open orders:", len(b.Holds))

	// An order that expires (in a millisecond here, so that the example need
	// not wait): the sweeper releases its hold once the server's clock has
	// passed its expiry. engined serve runs one; a program of its own runs
	// engine.NewSweeper(eng, nil).Run. Sweep is one pass.
	apply(instructions.New("order-8-place", seller).Freeze("BTC", "0.02", "order-8", time.Millisecond))
	sweeper := engine.NewSweeper(eng, nil)
	open := func() bool { _, ok := state(seller).Holds["order-8"]; return ok }
	for open() {
		if err := sweeper.Sweep(ctx); err != nil {
			log.Fatal(err) // among them, the context's deadline
		}
	}
	s := state(seller)
	fmt.Println("seller:", s.Balances["BTC"].Available, "BTC available,", s.Balances["BTC"].Frozen, "frozen,",
		s.Balances["USDT"].Available, "USDT, open orders:", len(s.Holds))
	fmt.Println("fees:", state(fees).Balances["USDT"].Available, "USDT")
	// Output:
	// buy order placed: 700.000000 available, 300.000000 frozen
	// fill committed
	// fill committed
	// fill aborted: EXCEEDS_HOLD in part 0
	// buyer: 850.000000 USDT, 0.00300000 BTC, open orders: 0
	// seller: 0.04000000 BTC available, 0.00700000 frozen, 149.850000 USDT, open orders: 1
	// fees: 0.150000 USDT
}

// A checkout flow (docs/guides/checkout.md): money, points and a coupon in
// one step; the same held at order time and captured at payment; a refund;
// a retried request.
func Example_checkout() {
	ctx := context.Background()
	eng := engine.New(exampleClient(), &engine.Options{Assets: instructions.MustParseAssets("CNY:2")})
	user := newID("u1001")
	apply := func(in instructions.Instruction) instructions.Result {
		res, err := eng.Apply(ctx, in)
		if err != nil {
			log.Fatal(err)
		}
		return res
	}
	apply(instructions.New("signup", user).Open().Credit("CNY", "200.00").EarnPoints("5000").
		GrantCoupon("c-welcome", time.Time{}).GrantCoupon("c-10off", time.Time{}))

	// Pay in one step: 80.00 CNY, 2,000 points and a coupon, all or nothing.
	pay := instructions.New("order-55-pay", user).WithCounterparty("merchant:88").WithMemo("order 55").
		Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-welcome")
	res := apply(pay)
	fmt.Println("paid:", res.Balances["CNY"].Available, "CNY,", res.Points.Available, "points, coupon", res.Coupons["c-welcome"])

	// A retried request (the client timed out, or the user clicked twice)
	// sends the same instruction again: it is answered as the first time and
	// changes nothing. The same id with another body is refused.
	again := apply(pay)
	fmt.Println("retried:", again.Replayed, again.Seq == res.Seq, again.Balances["CNY"].Available)
	_, err := eng.Apply(ctx, instructions.New("order-55-pay", user).Debit("CNY", "8.00"))
	fmt.Println("same id, other body:", errors.Is(err, engine.ErrIdempotencyConflict))

	// A step that fails changes nothing: the coupon is used, so no money
	// and no points are taken either.
	_, err = eng.Apply(ctx, instructions.New("order-56-pay", user).Debit("CNY", "10.00").RedeemCoupon("c-welcome"))
	fmt.Println("coupon used twice:", errors.Is(err, engine.ErrCouponUnavailable))

	// Hold at order time: 30.00 CNY, 1,000 points and a coupon under the
	// order's hold, for 15 minutes; capture them when the payment is confirmed.
	held := apply(instructions.New("order-56-hold", user).Freeze("CNY", "30.00", "order-56", 15*time.Minute).
		FreezePoints("1000", "order-56").LockCoupon("c-10off", "order-56"))
	fmt.Println("held:", held.Balances["CNY"].Frozen, "CNY,", held.Points.Frozen, "points, coupon", held.Coupons["c-10off"])
	captured := apply(instructions.New("order-56-capture", user).WithCounterparty("merchant:88").Settle("order-56"))
	fmt.Println("captured:", captured.Balances["CNY"].Available, "CNY,", captured.Points.Available, "points, coupon",
		captured.Coupons["c-10off"], "open holds:", len(captured.Holds))

	// A refund gives the money and the points back, from the merchant.
	refund := apply(instructions.New("order-56-refund", user).WithCounterparty("merchant:88").WithMemo("refund of order 56").
		Credit("CNY", "30.00").EarnPoints("1000"))
	fmt.Println("refunded:", refund.Balances["CNY"].Available, "CNY,", refund.Points.Available, "points")
	// Output:
	// paid: 120.00 CNY, 3000 points, coupon used
	// retried: true true 120.00
	// same id, other body: true
	// coupon used twice: true
	// held: 30.00 CNY, 1000 points, coupon held:order-56
	// captured: 90.00 CNY, 2000 points, coupon used open holds: 0
	// refunded: 120.00 CNY, 3000 points
}

// Testing a service of your own (docs/guides/testing.md) against a real
// Redis Cluster that the clustertest harness starts, through a failover.
func Example_testing() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := clustertest.Start(ctx, clustertest.Options{Masters: 3, Replicas: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()
	rdb := c.Client(nil)
	defer rdb.Close()

	// The service under test: it answers a payment only once a replica has
	// it, and retries with the same id while the outcome is unknown.
	eng := engine.New(rdb, &engine.Options{MinReplicaAcks: 1})
	pay := func(id, user, amount string) (instructions.Result, error) {
		for {
			res, err := eng.Apply(ctx, instructions.New(id, user).Debit("CNY", amount))
			if !errors.Is(err, engine.ErrUnavailable) || ctx.Err() != nil {
				return res, err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	if _, err := eng.Apply(ctx, instructions.New("signup", "u1").Open().Credit("CNY", "100.00")); err != nil {
		log.Fatal(err)
	}
	res, err := pay("order-1", "u1", "30.00")
	fmt.Println("paid:", res.Balances["CNY"].Available, err)

	// A crash: the master of the user's slot dies and its replica takes over.
	master, err := c.MasterOf(ctx, cluster.HolderSlot("u1"))
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Kill(master); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitFailover(ctx, master); err != nil {
		log.Fatal(err)
	}

	// The promoted master has no replica to confirm a write yet: one
	// attempt is answered UNAVAILABLE, its outcome unknown.
	_, err = eng.Apply(ctx, instructions.New("order-2", "u1").Debit("CNY", "20.00"))
	fmt.Println("unconfirmed:", errors.Is(err, engine.ErrUnavailable))

	// The old master comes back as the new one's replica; the service's
	// retry with the same id applies the payment once.
	if err := c.Restart(ctx, master); err != nil {
		log.Fatal(err)
	}
	res, err = pay("order-2", "u1", "20.00")
	fmt.Println("paid:", res.Balances["CNY"].Available, err)

	// What was answered before the crash survived it: the first payment,
	// sent again, is replayed with its first answer.
	res, err = pay("order-1", "u1", "30.00")
	fmt.Println("replayed:", res.Replayed, res.Balances["CNY"].Available, err)
	// Output:
	// paid: 70.00 <nil>
	// unconfirmed: true
	// paid: 50.00 <nil>
	// replayed: true 70.00 <nil>
}

// guideExamples names, for each document of the module, the examples that its Go code
// blocks are, in order: a block is the example's body, // Output: included,
// so a guide that stops working fails its example, and one edited apart from
// its example fails TestGuides_CodeIsTheExamples.
var guideExamples = map[string][]string{
	"README.md":               {"Example"},
	"docs/guides/trading.md":  {"Example_trading"},
	"docs/guides/checkout.md": {"Example_checkout"},
	"docs/guides/testing.md":  {"Example_testing"},
}

func TestGuides_CodeIsTheExamples(t *testing.T) {
	bodies := exampleBodies(t, "example_test.go", "example_guides_test.go")
	for doc, names := range guideExamples {
		t.Run(doc, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", doc))
			require.NoError(t, err)
			blocks := goBlocks(string(src))
			require.Len(t, blocks, len(names), "Go code blocks of %s", doc)
			for i, name := range names {
				body, ok := bodies[name]
				require.True(t, ok, "no function %s", name)
				assert.Contains(t, body, "// Output:", "%s checks nothing", name)
				assert.Equal(t, body, blocks[i], "code block %d of %s is not the body of %s", i+1, doc, name)
			}
		})
	}
}

// exampleBodies reads the Example functions of files: each one's body, as
// a document shows it (one tab of indentation less).
func exampleBodies(t *testing.T, files ...string) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	for _, name := range files {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			text := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			lines := strings.Split(strings.Trim(text, "\n"), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "\t")
			}
			bodies[fn.Name.Name] = strings.Join(lines, "\n")
		}
	}
	return bodies
}

// goBlocks returns the text of each fenced Go code block of a Markdown
// document.
func goBlocks(doc string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case !in && l == "```go":
			in, cur = true, nil
		case in && l == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, l)
		}
	}
	return blocks
}

// Every test the README and the docs name as a claim's proof exists: a
// renamed or removed test takes its sentence with it.
func TestDocs_NamedTestsExist(t *testing.T) {
	funcs := map[string]bool{}
	require.NoError(t, filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				funcs[fn.Name.Name] = true
			}
		}
		return nil
	}))
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	guides, err := filepath.Glob("../docs/guides/*.md")
	require.NoError(t, err)
	named := regexp.MustCompile("`((?:Test|Example|Fuzz|Benchmark)[A-Za-z0-9_]+)")
	for _, doc := range append(append([]string{"../README.md", "../deploy/README.md"}, docs...), guides...) {
		src, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			name := strings.TrimSuffix(m[1], "_")
			if strings.HasSuffix(m[1], "_") { // a family: TestX_...
				found := false
				for f := range funcs {
					found = found || strings.HasPrefix(f, m[1])
				}
				assert.True(t, found, "%s names tests %s..., and none exists", doc, m[1])
				continue
			}
			assert.True(t, funcs[name], "%s names %s, which does not exist", doc, name)
		}
	}
}
