package engine

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// decodedResult reads a result json the general way, as parseReply did
// before it had plainResult.
func decodedResult(e *Engine, n instructions.Normalized, replayed bool, body string) (instructions.Result, error) {
	sr, err := stored.ParseResult(body)
	if err != nil {
		return instructions.Result{}, err
	}
	return e.result(n, replayed, sr)
}

// samePlainResult checks that whatever plainResult accepts, it reads as
// the JSON decoder does.
func samePlainResult(t *testing.T, e *Engine, n instructions.Normalized, body string) bool {
	t.Helper()
	got, ok := e.plainResult(n, true, body)
	if !ok {
		return false
	}
	want, err := decodedResult(e, n, true, body)
	require.NoError(t, err, "plainResult accepted %q", body)
	require.Equal(t, want, got, "%q", body)
	return true
}

// randomResult writes a result json as the apply function might, keys in any order,
// with any asset (known or not) and any stored values.
func randomResult(r *rand.Rand) string {
	word := func(alphabet string) string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	num := func() string {
		switch r.IntN(6) {
		case 0:
			return "0"
		case 1:
			return word("0123456789-x")
		case 2:
			return strconv.FormatInt(r.Int64(), 10)
		}
		return strconv.FormatInt(r.Int64N(instructions.MaxUnits+1), 10)
	}
	assets := []string{"CNY", "USDT", "BTC", "EUR", "GONE", instructions.PointsLeg, ""}
	asset := func() string { return assets[r.IntN(len(assets))] }
	q := func(s string) string { return `"` + s + `"` }
	members := func(value func() string, key func() string) string {
		var m []string
		used := map[string]bool{}
		for range r.IntN(4) {
			if k := key(); !used[k] {
				used[k] = true
				m = append(m, q(k)+":"+value())
			}
		}
		return "{" + strings.Join(m, ",") + "}"
	}
	hold := func() string {
		var legs []string
		for range r.IntN(4) {
			legs = append(legs, asset()+"="+num())
		}
		s := num() + "|" + strings.Join(legs, ",") + "|" + strings.Join(strings.Fields(word("cd-1 ")), ",")
		return s[:len(s)-r.IntN(3)*r.IntN(2)] // now and then, a stored value cut short
	}
	fields := []string{
		`"s":` + q(num()),
		`"st":` + q([]string{"active", "suspended"}[r.IntN(2)]),
		`"b":` + members(func() string { return "[" + q(num()) + "," + q(num()) + "]" }, asset),
		`"p":[` + q(num()) + "," + q(num()) + "]",
		`"c":` + members(func() string { return q(word("availableusdhl:|0123456789")) }, func() string { return word("c-12") }),
		`"h":` + members(func() string { return q(hold()) }, func() string { return word("ord-12") }),
	}
	r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	return "{" + strings.Join(fields[:len(fields)-r.IntN(3)], ",") + "}"
}

// plainResult is a shortcut: on every result the apply function writes it must
// answer as the JSON decoder, and on anything else either do the same or
// leave the body to the decoder.
func TestPlainResult_AsTheDecoder(t *testing.T) {
	e := New(nil, nil)
	n, err := costCheckout().Normalize(e.assets)
	require.NoError(t, err)

	require.True(t, samePlainResult(t, e, n, costCheckoutReply[len("ok\n"):]))
	require.True(t, samePlainResult(t, e, n, `{"s":"1","st":"active","b":{},"c":{},"h":{}}`))

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	mutations := []func(string) string{
		func(s string) string { return strings.Replace(s, ",", ", ", 1) },
		func(s string) string { return strings.Replace(s, `":"`, `":"\u0041`, 1) },
		func(s string) string { return strings.Replace(s, `"s"`, `"S"`, 1) },
		func(s string) string { return strings.Replace(s, `{"`, `{"b":{},"`, 1) },
		func(s string) string { return strings.Replace(s, `:["`, `:["1","`, 1) },
		func(s string) string { return strings.Replace(s, `"p":[`, `"p":null,"x":[`, 1) },
		func(s string) string { return strings.Replace(s, `"st":"active"`, `"st":1`, 1) },
		func(s string) string { return strings.Replace(s, `a`, "é", 1) },
		func(s string) string { return s + " " },
		func(s string) string { return s + "}" },
		func(s string) string { i := r.IntN(len(s) + 1); return s[:i] },
		func(s string) string { i := r.IntN(len(s)); return s[:i] + s[i+1:] },
	}
	accepted := 0
	for range 20000 {
		body := randomResult(r)
		if samePlainResult(t, e, n, body) {
			accepted++
		}
		samePlainResult(t, e, n, mutations[r.IntN(len(mutations))](body))
	}
	assert.Greater(t, accepted, 10000, "most results take the short way")
}

// Whatever the reply, plainResult never answers otherwise than the decoder.
func FuzzPlainResult(f *testing.F) {
	f.Add(costCheckoutReply[len("ok\n"):])
	f.Add(`{"s":"1","st":"active","b":{},"c":{},"h":{}}`)
	f.Add(`{"s":"2","b":{"CNY":["1","2"],"CNY":["3","4"]},"c":{"c":"held:o|5"},"h":{"o":"0|points=5|c"}}`)
	e := New(nil, nil)
	n, err := costCheckout().Normalize(e.assets)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		samePlainResult(t, e, n, body)
	})
}

// holdOrig is hold as first written, with SplitN and Split (a fourth part,
// the count of undecided takes, is not shown).
func holdOrig(e *Engine, raw string) instructions.Hold {
	h := instructions.Hold{Legs: map[string]string{}, Coupons: []string{}}
	parts := strings.SplitN(raw, "|", 4)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	h.ExpiresMs, _ = strconv.ParseInt(parts[0], 10, 64)
	for _, leg := range strings.Split(parts[1], ",") {
		if a, units, ok := strings.Cut(leg, "="); ok {
			h.Legs[a] = e.amount(a, units)
		}
	}
	if parts[2] != "" {
		h.Coupons = strings.Split(parts[2], ",")
	}
	return h
}

func TestHold_AsTheFirstImplementation(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	e := New(nil, nil)
	pieces := []string{"|", ",", "=", "CNY", "USDT", "points", "0", "12", "-3", "99999999999999999999", "c-1", "x"}
	for range 50000 {
		var b strings.Builder
		for range r.IntN(14) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		raw := b.String()
		require.Equal(t, holdOrig(e, raw), e.hold(raw), "%q", raw)
	}
}

func BenchmarkParseReply_Debit(b *testing.B) {
	e := New(nil, nil)
	c, err := e.prepare(instructions.New("d-1", "u1").Debit("CNY", "0.01"))
	if err != nil {
		b.Fatal(err)
	}
	reply := []any{int64(0), `ok
{"s":"7","st":"active","b":{"CNY":["99999993","0"]},"c":{},"h":{}}`}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.parseReply(c.n, reply); err != nil {
			b.Fatal(err)
		}
	}
}

// An idempotency record keeps a short form of the result (stored.KeptResult); the
// replay that reads it back must answer exactly what the result did.
func TestKeptResult_ReplaysAsTheResult(t *testing.T) {
	e := New(nil, nil)
	n, err := costCheckout().Normalize(e.assets)
	require.NoError(t, err)
	check := func(body string) bool {
		want, ok := e.plainResult(n, true, body)
		if !ok {
			return false
		}
		kept := stored.KeptResult(body)
		got, err := e.parseReply(n, []any{int64(1), "ok\n" + kept})
		require.NoError(t, err, "%q kept as %q", body, kept)
		require.Equal(t, want, got, "%q kept as %q", body, kept)
		return kept[0] != '{'
	}
	require.True(t, check(costCheckoutReply[len("ok\n"):]), "a checkout's result gets the short form")
	require.True(t, check(`{"s":"2","st":"active","b":{"CNY":["117000","0"]},"c":{},"h":{}}`))
	assert.Equal(t, "2 bCNY/117000/0", stored.KeptResult(`{"s":"2","st":"active","b":{"CNY":["117000","0"]},"c":{},"h":{}}`))

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	for range 5000 {
		check(randomResult(r))
	}
}
