package main

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atomledger/atomledger/instructions"
)

// limits are what a token may do in a second, 0 for no limit: requests to
// /v1/, and rejected instructions the script remembers (about 152 bytes of
// Redis memory each, for the idempotency TTL).
type limits struct{ requests, rejections int }

// maxLimit bounds --rate-limit and --rejection-limit.
const maxLimit = 1_000_000

// limitKinds name the limits, as atomledger_rate_limited_total labels them:
// limitKinds[k] is the kind k.
var limitKinds = [2]string{"requests", "rejections"}

const (
	kindRequests = iota
	kindRejections
)

// parseLimit reads a limit a second.
func parseLimit(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxLimit {
		return 0, fmt.Errorf("want a whole number a second, 0 (no limit) to %d", maxLimit)
	}
	return n, nil
}

// tokenLimits reads the optional fields of a tokens file line after NAME
// SCOPES TOKEN: rate-limit=N and rejection-limit=N, each at most once, in
// place of the flags' l. Errors name a field by its place, never quote it:
// it may be a misplaced token.
func tokenLimits(fields []string, l limits) (limits, error) {
	var seen [2]bool
	for i, f := range fields {
		key, v, _ := strings.Cut(f, "=")
		k := kindRequests
		switch key {
		case "rate-limit":
		case "rejection-limit":
			k = kindRejections
		default:
			return l, fmt.Errorf("field %d: want rate-limit=N or rejection-limit=N after NAME SCOPES TOKEN", i+4)
		}
		if seen[k] {
			return l, fmt.Errorf("field %d: %s is given twice", i+4, key)
		}
		seen[k] = true
		n, err := parseLimit(v)
		if err != nil {
			return l, fmt.Errorf("field %d, %s: %w", i+4, key, err)
		}
		if k == kindRequests {
			l.requests = n
		} else {
			l.rejections = n
		}
	}
	return l, nil
}

// bucket is a token bucket that fills at its rate a second up to one
// second's worth. Rejections are taken after the fact, so its level may fall
// below zero: a batch of them past the limit is paid back before the next
// write.
type bucket struct {
	level float64
	at    time.Time // of the level; zero: never used, full
}

// fill brings the level up to now at rate (a rate lowered on SIGHUP caps it
// at once).
func (b *bucket) fill(now time.Time, rate int) {
	r := float64(rate)
	if b.at.IsZero() {
		b.level = r
	} else {
		b.level = min(r, b.level+now.Sub(b.at).Seconds()*r)
	}
	b.at = now
}

// wait is how long until the bucket holds one whole unit at rate, in whole
// seconds (at least 1), as Retry-After gives it; 0 if it holds one now.
func (b *bucket) wait(rate int) int {
	if b.level >= 1 {
		return 0
	}
	return max(1, int(math.Ceil((1-b.level)/float64(rate))))
}

// tokenState is the buckets of one token and its 429s by kind.
type tokenState struct {
	buckets [2]bucket
	limited [2]uint64
}

// limiter holds the state of every token's limits, by token name: a token
// keeps its buckets across a SIGHUP that keeps its name. Its zero value is
// ready.
type limiter struct {
	mu     sync.Mutex
	tokens map[string]*tokenState
}

// state is name's state; l.mu is held.
func (l *limiter) state(name string) *tokenState {
	st := l.tokens[name]
	if st == nil {
		if l.tokens == nil {
			l.tokens = map[string]*tokenState{}
		}
		st = &tokenState{}
		l.tokens[name] = st
	}
	return st
}

// admit takes a request of t from its requests bucket and, for a write,
// checks that its rejections bucket is not spent. A refusal gives its kind
// and the seconds until it would pass.
func (l *limiter) admit(t token, write bool, now time.Time) (kind, wait int) {
	rates := [2]int{t.limits.requests, t.limits.rejections}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state(t.name)
	for k, rate := range rates {
		if rate == 0 || (k == kindRejections && !write) {
			continue
		}
		b := &st.buckets[k]
		b.fill(now, rate)
		if wait := b.wait(rate); wait > 0 {
			st.limited[k]++
			return k, wait
		}
		if k == kindRequests {
			b.level--
		}
	}
	return 0, 0
}

// reject takes n remembered rejections of t from its rejections bucket.
func (l *limiter) reject(t token, n int, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := &l.state(t.name).buckets[kindRejections]
	b.fill(now, t.limits.rejections)
	b.level -= float64(n)
}

// serve passes a request of t, whose route needs the scope need, to next
// unless one of t's limits refuses it: 429 RATE_LIMITED with Retry-After.
// The rejection limit refuses writes only, and counts the rejections a
// write leaves remembered once it is answered.
func (l *limiter) serve(w http.ResponseWriter, r *http.Request, t token, need scope, next http.Handler) {
	write := need == scopeWrite
	if t.limits.requests == 0 && (t.limits.rejections == 0 || !write) {
		next.ServeHTTP(w, r)
		return
	}
	if kind, wait := l.admit(t, write, time.Now()); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		var e *instructions.Error
		if kind == kindRequests {
			e = instructions.Errorf(instructions.CodeRateLimited, instructions.NoOp,
				"token %q is over its limit of %d requests a second: retry in %d s", t.name, t.limits.requests, wait)
		} else {
			e = instructions.Errorf(instructions.CodeRateLimited, instructions.NoOp,
				"token %q is over its limit of %d rejected instructions a second (each is remembered for the idempotency TTL): no write for %d s",
				t.name, t.limits.rejections, wait)
		}
		writeError(w, e, false)
		return
	}
	next.ServeHTTP(w, r)
	if x, ok := w.(*exchange); ok && write && t.limits.rejections > 0 && x.remembered > 0 {
		l.reject(t, x.remembered, time.Now())
	}
}

// remembered tells whether err is a rejection the script recorded under the
// instruction's id: a fresh one (not a replay) of a 422 code, but
// HOLDER_NOT_FOUND (nothing is written for an unknown holder).
func remembered(err error) bool {
	if err == nil {
		return false // before e, which escapes: a success allocates nothing here
	}
	var e *instructions.Error
	return errors.As(err, &e) && !e.Replayed && e.Code != instructions.CodeHolderNotFound &&
		httpStatus(e.Code, false) == http.StatusUnprocessableEntity
}

// outcome counts the answer to one instruction in the metrics, and in the
// request's exchange if the script remembered its rejection.
func (s *server) outcome(w http.ResponseWriter, err error) {
	s.metrics.outcome(err)
	if x, ok := w.(*exchange); ok && remembered(err) {
		x.remembered++
	}
}

var limitedDesc = prometheus.NewDesc("atomledger_rate_limited_total",
	"Requests answered 429 RATE_LIMITED, by token name and by limit: requests (--rate-limit) or rejections (--rejection-limit).",
	[]string{"token", "limit"}, nil)

// limitedCollector exports the 429s of every token accepted now, by kind,
// at zero from the start.
type limitedCollector struct{ a *authenticator }

func (c limitedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- limitedDesc }

func (c limitedCollector) Collect(ch chan<- prometheus.Metric) {
	tokens := *c.a.tokens.Load()
	counts := make([][2]uint64, len(tokens))
	l := &c.a.limits
	l.mu.Lock()
	for i, t := range tokens {
		if st := l.tokens[t.name]; st != nil {
			counts[i] = st.limited
		}
	}
	l.mu.Unlock()
	for i, t := range tokens {
		for k, kind := range limitKinds {
			ch <- prometheus.MustNewConstMetric(limitedDesc, prometheus.CounterValue, float64(counts[i][k]), t.name, kind)
		}
	}
}
