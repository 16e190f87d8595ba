package main

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// The buckets, on a clock of the test's own: one second's worth at once,
// then one unit per 1/rate; rejections taken after the fact run into debt,
// which refuses writes, not reads, until it is paid back.
func TestLimiter_Buckets(t *testing.T) {
	var l limiter
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tok := token{name: "t", limits: limits{requests: 2, rejections: 1}}

	for i := range 2 {
		kind, wait := l.admit(tok, true, t0)
		require.Zero(t, wait, "request %d of the burst", i)
		require.Zero(t, kind)
	}
	kind, wait := l.admit(tok, true, t0)
	assert.Equal(t, kindRequests, kind)
	assert.Equal(t, 1, wait, "half a second to wait, given as a whole second")
	_, wait = l.admit(tok, true, at(500*time.Millisecond))
	assert.Zero(t, wait, "one request back after 1/rate")

	// A batch leaves 10 rejections remembered: 9 past the limit.
	l.reject(tok, 10, at(time.Second))
	kind, wait = l.admit(tok, true, at(2*time.Second))
	assert.Equal(t, kindRejections, kind)
	assert.Equal(t, 9, wait, "the debt, less the second gone by, at 1 a second")
	_, wait = l.admit(tok, false, at(2*time.Second))
	assert.Zero(t, wait, "a read passes the rejection limit")
	_, wait = l.admit(tok, true, at(10*time.Second))
	assert.Equal(t, 1, wait)
	_, wait = l.admit(tok, true, at(11*time.Second))
	assert.Zero(t, wait, "paid back")
	assert.Equal(t, [2]uint64{1, 2}, l.tokens["t"].limited, "429s by kind")

	// Another token has buckets of its own; a lower rate (SIGHUP) caps the
	// level at once.
	_, wait = l.admit(token{name: "u", limits: limits{requests: 1}}, true, at(11*time.Second))
	assert.Zero(t, wait)
	_, wait = l.admit(token{name: "t", limits: limits{requests: 1}}, true, at(time.Hour))
	assert.Zero(t, wait)
	_, wait = l.admit(token{name: "t", limits: limits{requests: 1}}, true, at(time.Hour))
	assert.Equal(t, 1, wait, "a burst of one second's worth at the new rate")
}

// Only a fresh rejection of a 422 code is remembered by the script, and so
// counted by the rejection limit.
func TestLimiter_RememberedRejections(t *testing.T) {
	fresh := instructions.Errorf(instructions.CodeInsufficientFunds, 0, "debit 5.00 CNY: available 1.00")
	replayed := *fresh
	replayed.Replayed = true
	assert.True(t, remembered(fresh))
	assert.True(t, remembered(instructions.Errorf(instructions.CodeHolderSuspended, 0, "")))
	for _, err := range []error{nil, &replayed,
		instructions.Errorf(instructions.CodeHolderNotFound, 0, "nothing is written for an unknown holder"),
		instructions.Errorf(instructions.CodeInvalidAmount, 0, "before Redis"),
		instructions.Errorf(instructions.CodeIdempotencyConflict, instructions.NoOp, "the first record stays"),
		instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp, "unknown"),
	} {
		assert.False(t, remembered(err), "%v", err)
	}
}

// A line of the tokens file may change the flags' limits for its token.
func TestLoadTokens_Limits(t *testing.T) {
	file := writeFile(t, t.TempDir(), "tokens",
		"bare-1\nci read s-ci rate-limit=5\nbilling write s-billing rejection-limit=0 rate-limit=7\nops admin s-ops\n")
	c, err := parseConfig(t, map[string]string{"ENGINED_TOKENS": "env-1", "ENGINED_TOKENS_FILE": file,
		"ENGINED_RATE_LIMIT": "100"}, "--rejection-limit", "3")
	require.NoError(t, err)
	tokens, err := loadTokens(c)
	require.NoError(t, err)
	got := map[string]limits{}
	for _, tok := range tokens {
		got[tok.name] = tok.limits
	}
	assert.Equal(t, map[string]limits{
		"tokens:1":      {requests: 100, rejections: 3},
		"tokens-file:1": {requests: 100, rejections: 3},
		"ci":            {requests: 5, rejections: 3},
		"billing":       {requests: 7, rejections: 0},
		"ops":           {requests: 100, rejections: 3},
	}, got)

	for _, tt := range []struct{ name, content, want string }{
		{"a negative limit", "ci read s-ci rate-limit=-1\n", "line 1: field 4, rate-limit: want a whole number"},
		{"not a number", "ci read s-ci rejection-limit=ten\n", "field 4, rejection-limit: want a whole number"},
		{"a limit twice", "ci read s-ci rate-limit=1 rate-limit=2\n", "field 5: rate-limit is given twice"},
		{"an unknown field", "ci read s-ci burst=5\n", "field 4: want rate-limit=N or rejection-limit=N"},
		{"a token after the limits", "ci read rate-limit=5 s-ci\n", "field 4: want rate-limit=N or rejection-limit=N"},
		{"six fields", "ci read s-ci rate-limit=1 rejection-limit=1 s-other\n", "NAME SCOPES TOKEN [rate-limit=N] [rejection-limit=N]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := writeFile(t, t.TempDir(), "bad", tt.content)
			c, err := parseConfig(t, nil, "--tokens-file", bad)
			require.NoError(t, err)
			_, err = loadTokens(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, secret := range []string{"s-ci", "s-other"} {
				assert.NotContains(t, err.Error(), secret, "never quotes a token")
			}
		})
	}
	for _, v := range []string{"-1", "x", "1000001", "1.5"} {
		_, err := parseConfig(t, nil, "--rate-limit", v)
		assert.ErrorContains(t, err, `--rate-limit "`+v+`": want a whole number a second`)
		_, err = parseConfig(t, map[string]string{"ENGINED_REJECTION_LIMIT": v})
		assert.ErrorContains(t, err, "ENGINED_REJECTION_LIMIT (--rejection-limit)")
	}
}

// wantRateLimited checks a 429 RATE_LIMITED answer: the error object, a
// Retry-After of whole seconds, a message naming the token.
func wantRateLimited(t *testing.T, a reply, name string) {
	t.Helper()
	wantErrorAnswer(t, a, http.StatusTooManyRequests, "RATE_LIMITED")
	after, err := strconv.Atoi(a.header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q is whole seconds", a.header.Get("Retry-After"))
	assert.Positive(t, after)
	assert.Contains(t, string(a.body), `token \"`+name+`\" is over its limit`)
}

// firstRefusal sends requests until one is refused, a few at most: a limit
// of 1 a second lets the first through, and the next unless a second passed
// between them. It gives the refusal and how many passed before it.
func firstRefusal(t *testing.T, send func() reply) (refused reply, passed int) {
	t.Helper()
	for passed = 0; passed < 20; passed++ {
		if a := send(); a.status == http.StatusTooManyRequests {
			return a, passed
		}
	}
	require.FailNow(t, "no 429 within 20 requests at 1 a second")
	return reply{}, 0
}

// TestServe_RateLimits runs a daemon with limits per token, from the flags
// and from the tokens file: a token over its requests a second is 429
// RATE_LIMITED with Retry-After, on reads and writes, and a write so refused
// changes nothing; a token over its remembered rejections a second has its
// writes refused (a flood of rejected instructions is cut off: none of them
// is remembered) while it still reads; another token is not limited; the
// 429s are counted by token and limit in /metrics; SIGHUP changes a token's
// limits.
func TestServe_RateLimits(t *testing.T) {
	needRedis(t)
	t.Parallel()
	fast, other, flood := newID("s-fast"), newID("s-other"), newID("s-flood")
	file := writeFile(t, t.TempDir(), "tokens", "fast read,write "+fast+" rate-limit=1 rejection-limit=0\n"+
		"other read,write "+other+" rate-limit=0 rejection-limit=0\nflood read,write "+flood+"\n")
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", strings.Join(testCluster.Addrs(), ","), "--tokens-file", file,
			"--rate-limit", "1000", "--rejection-limit", "1"}
	})
	d.url = "http://" + addr
	d.waitHealthy(t)
	as := func(secret, method, path, body string) reply {
		return d.doWith(t, method, path, "Bearer "+secret, strings.NewReader(body))
	}
	holder := newID("h")
	require.Equal(t, http.StatusOK, as(other, http.MethodPost, "/v1/instructions",
		instructionJSON(newID("open"), holder, `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "1.00"}]`)).status)
	state := func() string {
		a := as(other, http.MethodGet, "/v1/holders/"+holder, "")
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		return string(a.body)
	}
	notRemembered := func(id string) {
		t.Helper()
		wantErrorAnswer(t, as(other, http.MethodGet, "/v1/holders/"+holder+"/instructions/"+id, ""),
			http.StatusNotFound, "INSTRUCTION_NOT_FOUND")
	}
	debit := func(id, amount string) string {
		return instructionJSON(id, holder, `[{"op": "debit", "asset": "CNY", "amount": "`+amount+`"}]`)
	}
	before := state()

	t.Run("requests a second", func(t *testing.T) {
		a, passed := firstRefusal(t, func() reply { return as(fast, http.MethodGet, "/v1/holders/"+holder, "") })
		assert.Positive(t, passed, "the burst lets the first through")
		wantRateLimited(t, a, "fast")
		assert.Contains(t, string(a.body), "limit of 1 requests a second")
		var id string
		a, _ = firstRefusal(t, func() reply {
			id = newID("d")
			return as(fast, http.MethodPost, "/v1/instructions", debit(id, "0.01"))
		})
		wantRateLimited(t, a, "fast")
		notRemembered(id)
		for range 30 {
			a := as(other, http.MethodGet, "/v1/holders/"+holder, "")
			require.Equal(t, http.StatusOK, a.status, "another token is not limited: %s", a)
		}
	})
	// Every debit above that passed took 0.01 of the 1.00.
	before = state()

	t.Run("rejections a second", func(t *testing.T) {
		// flood may leave 1 rejection a second; a batch of 20 leaves 20.
		entries := make([]string, 20)
		for i := range entries {
			entries[i] = debit(newID("r"), "5.00")
		}
		a := as(flood, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+strings.Join(entries, ",")+`]}`)
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.Equal(t, 20, strings.Count(string(a.body), `"INSUFFICIENT_FUNDS"`), "%s", a)
		// The flood goes on and is cut off: nothing it sends is
		// remembered, nor applied.
		for range 5 {
			id := newID("r")
			a := as(flood, http.MethodPost, "/v1/instructions", debit(id, "5.00"))
			wantRateLimited(t, a, "flood")
			assert.Contains(t, string(a.body), "limit of 1 rejected instructions a second")
			notRemembered(id)
		}
		id := newID("d")
		wantRateLimited(t, as(flood, http.MethodPost, "/v1/instructions", debit(id, "0.01")), "flood")
		notRemembered(id)
		wantRateLimited(t, as(flood, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+debit(newID("r"), "5.00")+`]}`), "flood")
		wantRateLimited(t, as(flood, http.MethodPost, "/v1/transfers", `{}`), "flood")
		assert.Equal(t, http.StatusOK, as(flood, http.MethodGet, "/v1/holders/"+holder, "").status, "flood still reads")
		// other's rejections are its own.
		for range 5 {
			wantErrorAnswer(t, as(other, http.MethodPost, "/v1/instructions", debit(newID("r"), "5.00")),
				http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS")
		}
	})
	assert.Equal(t, before, state(), "no refused request changed the holder")

	t.Run("counted in /metrics", func(t *testing.T) {
		a := d.doWith(t, http.MethodGet, "/metrics", "", nil)
		require.Equal(t, http.StatusOK, a.status)
		count := func(token, limit string) int {
			m := regexp.MustCompile(`(?m)^atomledger_rate_limited_total\{limit="` + limit + `",token="` + token + `"\} (\d+)$`).
				FindStringSubmatch(string(a.body))
			require.NotNil(t, m, "%s %s in:\n%s", token, limit, a.body)
			n, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			return n
		}
		assert.GreaterOrEqual(t, count("fast", "requests"), 2)
		assert.Equal(t, 8, count("flood", "rejections"))
		assert.Zero(t, count("flood", "requests"))
		assert.Zero(t, count("fast", "rejections"))
		assert.Zero(t, count("other", "requests"))
		assert.Zero(t, count("other", "rejections"))
	})

	t.Run("SIGHUP changes a token's limits", func(t *testing.T) {
		require.NoError(t, os.WriteFile(file, []byte("fast read,write "+fast+" rate-limit=0\nother read,write "+other+"\n"), 0o600))
		d.hangUp(t, "the tokens were read again")
		for range 30 {
			a := as(fast, http.MethodGet, "/v1/holders/"+holder, "")
			require.Equal(t, http.StatusOK, a.status, "fast has no request limit now: %s", a)
		}
	})
}
