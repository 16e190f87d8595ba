package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// Fingerprints are stored in idempotency records and in the ledger: a
// replay of an old id compares against them, so their value may never
// change. These were computed by the first implementation of build.
func TestBuild_FingerprintsNeverChange(t *testing.T) {
	exp := time.UnixMilli(1796000000000)
	long := strings.Repeat("m", 200) // a length past two digits
	cases := []struct {
		name string
		in   instructions.Instruction
		want string
	}{
		{"a checkout", costCheckout(), "5056c268177c19924d89d06591172dd6"},
		{"a one-op debit", instructions.New("d-1", "u1").Debit("CNY", "0.01"), "892328ba5aeb7ca0a762bed3dc0ccd4c"},
		{"an opening", instructions.New("open", "u1").Open().Credit("CNY", "1000000.00").Credit("USDT", "1000000.000000").
			EarnPoints("100000").GrantCoupon("c-1", exp), "3dff7ef5efc20c37f56ab5c3e8609469"},
		{"a long memo", instructions.New("i-9", "u2").WithMemo(long).Debit("BTC", "0.00000001"), "cf9d487e772bc970d0878f1473f26bcc"},
		{"a UTF-8 memo", instructions.New("i-10", "u2").WithMemo("订单 55 – café").EarnPoints("9007199254740991"), "137c7d3db0629cb1814252354949c93e"},
		{"holds", instructions.New("i-11", "u3").WithCounterparty("shop:1").FreezePoints("5", "h-1").LockCoupon("c-2", "h-2").
			Settle("h-0").SettleLeg("h-1", "points", "3").ReleaseLeg("h-3", "CNY", "90071992547409.91").Release("h-4"), "58f5c98e1d10d42763d0e1c7e23bf4c5"},
		{"a suspension", instructions.New("s", "u4").Suspend().Resume(), "f32c7fd3d603ceb44b3b0c20c1a20e05"},
	}
	e := New(nil, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := e.prepare(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want, p.args[2])
		})
	}
}

// fingerprintOrig is the first implementation of fingerprint, kept to check
// the current one against.
func fingerprintOrig(args []any) string {
	h := sha256.New()
	for i, a := range args {
		if i == 2 || i == 3 {
			continue
		}
		s := a.(string)
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// buildArgsOrig is the first implementation of build's arguments, with the
// route ("", unrouted) added since at its place: the print is still the one
// of the first implementation's arguments.
func buildArgsOrig(e *Engine, n instructions.Normalized) []any {
	args := make([]any, 7, 7+6*len(n.Steps))
	args[0], args[1], args[3], args[4], args[5], args[6] = n.Holder, n.ID, e.idemTTL, n.Counterparty, n.Memo, n.Transfer
	for _, s := range n.Steps {
		args = append(args, s.Op, s.Asset, strconv.FormatInt(s.Units, 10), s.Hold, s.Coupon, strconv.FormatInt(s.Ms, 10))
	}
	args[2] = fingerprintOrig(args)
	return slices.Insert(args, argRoute, any(""))
}

// The route is not in the fingerprint: the same body routed by two lane
// counts, or not routed, is one body, and its retry after a raise of the
// lanes replays. routed leaves the call it was given as it was.
func TestBuild_TheRouteIsNotInTheFingerprint(t *testing.T) {
	e := New(nil, nil)
	c, err := e.prepare(instructions.New("r-1", "m").Credit("CNY", "1.00"))
	require.NoError(t, err)
	r4, r8 := c.routed(4), c.routed(8)
	assert.Equal(t, "", c.args[argRoute])
	assert.Equal(t, "4", r4.args[argRoute])
	assert.Equal(t, "8", r8.args[argRoute])
	assert.Equal(t, c.args[argFP], r4.args[argFP])
	assert.Equal(t, c.args[argFP], fingerprint(r4.args))
	assert.Equal(t, fingerprint(r4.args), fingerprint(r8.args))
	r4.args[argRoute] = ""
	assert.Equal(t, c.args, r4.args, "only the route differs")
}

// randomRounds is how many rounds a randomized comparison makes of the n it
// asks for: fewer under the race detector (race_test.go).
var randomRounds = func(n int) int { return n }

// build is free to compute differently, never to answer differently: on
// random normalized instructions (build takes them as they come, so not
// even valid ones), it gives the arguments of the first implementation.
func TestBuild_ArgsAsTheFirstImplementation(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	str := func() string {
		b := make([]byte, r.IntN(4)*r.IntN(60))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	num := func() int64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return r.Int64N(1000)
		case 2:
			return r.Int64() - r.Int64()
		}
		return r.Int64N(instructions.MaxUnits + 1)
	}
	ops := []string{instructions.OpDebit, instructions.OpFreeze, instructions.OpSettle, "", "nope"}
	e := New(nil, nil)
	for range randomRounds(20000) {
		n := instructions.Normalized{ID: str(), Holder: str(), Counterparty: str(), Memo: str(), Transfer: str()}
		for range r.IntN(70) {
			n.Steps = append(n.Steps, instructions.Step{Op: ops[r.IntN(len(ops))], Asset: str(), Units: num(),
				Hold: str(), Coupon: str(), Ms: num()})
		}
		got := e.build(n)
		require.Equal(t, buildArgsOrig(e, n), got.args, "%+v", n)
	}
}

// apply's LANES_CHANGED reaches the engine as that code, for no op, its
// message the holder's count, never as a replay (it is not recorded).
func TestParseReply_LanesChangedGivesTheCount(t *testing.T) {
	e := New(nil, nil)
	n, err := instructions.New("r-1", "m").Credit("CNY", "1.00").Normalize(instructions.MustParseAssets("CNY:2"))
	require.NoError(t, err)
	_, err = e.parseReply(n, []any{int64(0), "err\nLANES_CHANGED\n-1\n8"})
	var ie *instructions.Error
	require.ErrorAs(t, err, &ie)
	assert.ErrorIs(t, err, instructions.CodeLanesChanged)
	assert.Equal(t, instructions.NoOp, ie.OpIndex)
	assert.Equal(t, "8", ie.Message)
	assert.False(t, ie.Replayed)
}
