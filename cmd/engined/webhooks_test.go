package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// verifyWebhook is a receiver's check, written from docs/feed.md and not
// from the sender's code: the HMAC-SHA256 of "<timestamp>.<body>" under the
// secret, and a timestamp within five minutes of now.
func verifyWebhook(secret, timestamp, signature string, body []byte, now time.Time) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "." + string(body)))
	return hmac.Equal([]byte("v1="+hex.EncodeToString(mac.Sum(nil))), []byte(signature))
}

// receiver is a webhook's receiver: up (it takes each batch), down (503),
// or hanging (it holds the next request until released).
type receiver struct {
	secret string

	mu       sync.Mutex
	mode     string
	got      []ledger.FeedEvent // every event of every batch taken, in order, duplicates included
	refused  int                // requests answered 503 while down
	badSig   int
	last     [3]string // timestamp, signature and body of the last batch taken
	hung     chan struct{}
	release  chan struct{}
	hungWith []ledger.FeedEvent
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	ts, sig := req.Header.Get("Atomledger-Timestamp"), req.Header.Get("Atomledger-Signature")
	r.mu.Lock()
	defer r.mu.Unlock()
	if !verifyWebhook(r.secret, ts, sig, body, time.Now()) {
		r.badSig++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var page ledger.FeedPage
	if err := json.Unmarshal(body, &page); err != nil {
		r.badSig++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch r.mode {
	case "down":
		r.refused++
		w.WriteHeader(http.StatusServiceUnavailable)
	case "hang":
		r.mode, r.hungWith = "up", page.Events
		close(r.hung)
		r.mu.Unlock()
		<-r.release
		r.mu.Lock()
		w.WriteHeader(http.StatusServiceUnavailable)
	default:
		r.got = append(r.got, page.Events...)
		r.last = [3]string{ts, sig, string(body)}
	}
}

func (r *receiver) set(mode string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = mode
}

// distinct gives the events taken, each once (the first time), in order.
func (r *receiver) distinct() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, k := range feedKeys(r.got) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// waitFor waits until the receiver took n distinct events.
func (r *receiver) waitFor(t *testing.T, n int, d *daemon) []string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got := r.distinct()
		if len(got) >= n {
			return got
		}
		require.True(t, time.Now().Before(deadline), "the receiver took %d of %d events; engined stderr:\n%s", len(got), n, d.stderr)
		time.Sleep(50 * time.Millisecond)
	}
}

// metric reads one sample of the daemon's /metrics ("" if absent).
func metric(t *testing.T, d *daemon, name string) string {
	t.Helper()
	a := d.doWith(t, http.MethodGet, "/metrics", "", nil)
	require.Equal(t, http.StatusOK, a.status)
	for _, line := range strings.Split(string(a.body), "\n") {
		if strings.HasPrefix(line, name+"{") {
			return line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	return ""
}

// TestWebhooks_AtLeastOnceThroughDowntimeAndAKill: a daemon with a ledger
// and a webhook delivers every event, signed; a receiver down for a while
// gets everything after (the daemon retried, counted the failures, showed
// the lag); a daemon killed while its batch is in flight leaves the cursor
// where it was (in PostgreSQL), and the next one sends that batch again and
// nothing the receiver took before; a signature
// checks only with the secret, the timestamp and the body it was made of.
func TestWebhooks_AtLeastOnceThroughDowntimeAndAKill(t *testing.T) {
	needRedis(t)
	const secret = "a-webhook-secret-for-tests"
	rig := newLedgerRig(t)
	rec := &receiver{secret: secret, hung: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	defer close(rec.release)
	env := map[string]string{"ENGINED_PG_DSN": rig.dsn, "ENGINED_WEBHOOKS": srv.URL + "/hook", "ENGINED_WEBHOOK_SECRET": secret}
	redis := rig.env["ENGINED_REDIS_ADDRS"]
	d := startServe(t, env, "--redis", redis)

	holders := []string{newID("wa"), newID("wb"), newID("wc")}
	total := 0
	applyRound := func(d *daemon) {
		for _, h := range holders {
			in := instructions.New(newID("c"), h).Credit("CNY", "1.00")
			if total < len(holders) {
				in = instructions.New(newID("open"), h).Open()
			}
			d.mustApply(t, in)
			total++
		}
	}
	applyRound(d)
	applyRound(d)
	rec.waitFor(t, total, d)
	assert.Equal(t, "0", metric(t, d, "atomledger_webhook_failures_total"))

	t.Run("a receiver down for a while gets everything after", func(t *testing.T) {
		rec.set("down")
		applyRound(d)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			rec.mu.Lock()
			refused := rec.refused
			rec.mu.Unlock()
			if refused >= 3 {
				break
			}
			require.True(t, time.Now().Before(deadline), "the daemon tried %d times", refused)
			time.Sleep(50 * time.Millisecond)
		}
		failures, err := strconv.Atoi(metric(t, d, "atomledger_webhook_failures_total"))
		require.NoError(t, err)
		assert.GreaterOrEqual(t, failures, 3)
		lag, err := strconv.ParseFloat(metric(t, d, "atomledger_webhook_lag_ms"), 64)
		require.NoError(t, err)
		assert.Positive(t, lag, "an event waits")
		rec.set("up")
		rec.waitFor(t, total, d)
	})

	t.Run("a daemon killed mid-batch: the next one sends the batch again", func(t *testing.T) {
		rec.set("hang")
		applyRound(d)
		<-rec.hung
		require.NoError(t, d.cmd.Process.Kill())
		d.wait(t, time.Minute)
		d2 := startServe(t, env, "--redis", redis)
		got := rec.waitFor(t, total, d2)
		for _, k := range feedKeys(rec.hungWith) {
			assert.Contains(t, got, k, "the batch in flight was sent again")
		}
		applyRound(d2)
		got = rec.waitFor(t, total, d2)
		seqs := map[string]int64{}
		for _, k := range got {
			h, s, _ := strings.Cut(k, "/")
			seq, _ := strconv.ParseInt(s, 10, 64)
			assert.Equal(t, seqs[h]+1, seq, "each holder's events in seq order, none missing: %v", got)
			seqs[h] = seq
		}
		assert.Len(t, got, total)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		assert.Len(t, rec.got, total, "no batch the receiver took was sent again: the cursor outlived the daemon")
	})

	t.Run("a wrong signature is detectable", func(t *testing.T) {
		rec.mu.Lock()
		ts, sig, body := rec.last[0], rec.last[1], rec.last[2]
		bad := rec.badSig
		rec.mu.Unlock()
		assert.Zero(t, bad, "every delivery was signed")
		n, err := strconv.ParseInt(ts, 10, 64)
		require.NoError(t, err)
		now := time.Unix(n, 0)
		require.True(t, verifyWebhook(secret, ts, sig, []byte(body), now))
		assert.Equal(t, sig, webhookSignature(secret, n, []byte(body)))
		assert.False(t, verifyWebhook("another-secret-of-16", ts, sig, []byte(body), now), "another secret")
		assert.False(t, verifyWebhook(secret, ts, sig, []byte(strings.Replace(body, `"seq":1`, `"seq":2`, 1)+" "), now), "another body")
		assert.False(t, verifyWebhook(secret, strconv.FormatInt(n+1, 10), sig, []byte(body), now), "another timestamp")
		assert.False(t, verifyWebhook(secret, ts, sig, []byte(body), now.Add(6*time.Minute)), "a replay after five minutes")
	})
}
