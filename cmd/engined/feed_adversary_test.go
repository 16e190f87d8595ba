package main

import (
	"context"
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
)

const feedAdversarySecret = "a-webhook-secret-for-adversary-tests"

// TestFeedAdversary_AFailedPostLogsNoURL: before the fix, a webhook whose URL
// carries its receiver's credential in the query
// (https://hooks.example/in?token=..., the usual shape of a receiver's
// URL) and whose POST fails without an HTTP answer (the connection drops,
// a timeout, a refused dial) gets a warning whose "error" is net/http's
// *url.Error, `Post "<the whole URL>": EOF`: the token is written to the
// log on every retry. (net/http masks a password of the user info, never
// the query.)
//
// The contract: the URL's query and credentials never reach the log, as the
// daemon takes care everywhere else: --webhook is a secret option
// (config.go: "never echo the value"; checkWebhookURL "never quotes the
// URL, which may hold credentials"), and the webhook's name, "the URL
// without credentials or query, for logs and metrics" (webhooks.go), is
// what docs/feed.md (Watching) promises for the labels. The defect is in
// webhook.post / deliver (cmd/engined/webhooks.go): the *url.Error from
// client.Do is logged as is; its Err alone (or a message naming w.name)
// should be.
func TestFeedAdversary_AFailedPostLogsNoURL(t *testing.T) {
	needRedis(t)
	rig := newLedgerRig(t)
	var mu sync.Mutex
	tries := 0
	// A receiver that drops each connection without an answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		tries++
		mu.Unlock()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	defer srv.Close()
	const token = "receiver-token-not-for-logs-4711"
	hook := strings.Replace(srv.URL, "http://", "http://hookuser:hookpass-not-for-logs@", 1) + "/in?token=" + token
	env := map[string]string{"ENGINED_PG_DSN": rig.dsn, "ENGINED_WEBHOOKS": hook, "ENGINED_WEBHOOK_SECRET": feedAdversarySecret}
	d := startServe(t, env, "--redis", rig.env["ENGINED_REDIS_ADDRS"])
	d.mustApply(t, instructions.New(newID("open"), newID("wl")).Open())

	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(d.stderr.String(), "webhook: the receiver did not take the batch") {
		require.True(t, time.Now().Before(deadline), "the daemon never logged a failed POST; stderr:\n%s", d.stderr)
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	require.Positive(t, tries, "the POST reached the receiver")
	mu.Unlock()
	logged := d.stderr.String()
	assert.NotContains(t, logged, token, "the webhook URL's query (the receiver's token) is in the log")
	assert.NotContains(t, logged, "hookpass-not-for-logs", "the webhook URL's password is in the log")
	assert.NotContains(t, metric(t, d, "atomledger_webhook_failures_total"), token)
}

// TestFeedAdversary_TwoWebhooksWhoseURLsHashAlikeBothDeliver: before the fix, a
// webhook's lease is pg_try_advisory_lock(class, hashtext(url)), a 32-bit
// hash of the URL, taken on a connection of its own per webhook. Two
// webhooks of one daemon whose URLs hash alike (found here by asking
// PostgreSQL's hashtext, about one pair in 2^32, a few among a few hundred
// thousand paths) contend for one lock: the one that takes it first
// delivers, and keeps it for good; the other finds it "held by another
// process" every 5 s and never sends a single batch, with no warning and
// its lag at 0 (it never reads a page). The same happens to two daemons
// configured with different webhooks.
//
// docs/feed.md, Webhooks: "`--webhook URL` ... POST the feed there; several
// times for several receivers", and "one at a time delivers a given
// webhook (a PostgreSQL session lock per webhook ...)". The contract: a lock per
// webhook, not per 32-bit hash of its URL (ledger/webhook.go,
// LeaseWebhook: e.g. lock on ledger.webhooks' row, or a key without
// collisions such as a serial id of the row).
func TestFeedAdversary_TwoWebhooksWhoseURLsHashAlikeBothDeliver(t *testing.T) {
	needRedis(t)
	rig := newLedgerRig(t)
	var mu sync.Mutex
	got := map[string]int{} // events taken per path
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] += strings.Count(string(body), `"cursor":`)
		mu.Unlock()
	}))
	defer srv.Close()

	var a, b string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, rig.led.Pool().QueryRow(ctx, `SELECT min(p), max(p)
		FROM (SELECT '/h' || i AS p FROM generate_series(1, 400000) i) s
		GROUP BY hashtext($1 || p) HAVING count(*) > 1 LIMIT 1`, srv.URL).Scan(&a, &b))
	require.NotEqual(t, a, b)
	var same bool
	require.NoError(t, rig.led.Pool().QueryRow(ctx, "SELECT hashtext($1) = hashtext($2)", srv.URL+a, srv.URL+b).Scan(&same))
	require.True(t, same)
	t.Logf("%s and %s hash alike", a, b)

	env := map[string]string{"ENGINED_PG_DSN": rig.dsn, "ENGINED_WEBHOOKS": srv.URL + a + "," + srv.URL + b,
		"ENGINED_WEBHOOK_SECRET": feedAdversarySecret}
	d := startServe(t, env, "--redis", rig.env["ENGINED_REDIS_ADDRS"])
	d.mustApply(t, instructions.New(newID("open"), newID("wh")).Open())

	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		na, nb := got[a], got[b]
		mu.Unlock()
		if na > 0 && nb > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("of two webhooks whose URLs hash alike, %s took %d events and %s took %d after 90 s; stderr:\n%s",
				a, na, b, nb, d.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFeedAdversary_AWebhookStalledBehindAnOpenTransactionShowsItsLag: before the fix, a
// session left idle in a transaction that holds a transaction id (any
// database of the PostgreSQL server: docs/feed.md, The cost) stops the
// feed, so the webhook stops delivering: an event committed to the ledger
// (its statement has it) waits, and the receiver never gets it while the
// session stays. The webhook's atomledger_webhook_lag_ms stays 0 all the
// while: pendingMs is set only from a page the feed handed out
// (webhook.deliver), and the stalled feed hands out none, so the gauge
// says "none waits", AtomledgerWebhookLag (max of that gauge > 5 min)
// never fires, and nothing is logged: the receiver silently gets nothing
// for as long as the forgotten session lives.
//
// docs/feed.md, Watching: "`atomledger_webhook_lag_ms` (the age of the
// oldest event its receiver has not taken; 0 when none waits)" and
// "`AtomledgerWebhookLag` fires when a receiver has taken nothing for five
// minutes". The contract: the lag counts the events the ledger has after the
// webhook's cursor, handed out yet or not (e.g. the ts_ms of the first
// event after the cursor read without the xmin bound), so a stalled feed
// shows as lag (cmd/engined/webhooks.go, deliver and register).
func TestFeedAdversary_AWebhookStalledBehindAnOpenTransactionShowsItsLag(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	rig := newLedgerRig(t)
	var mu sync.Mutex
	taken := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		taken += strings.Count(string(body), `"cursor":`)
		mu.Unlock()
	}))
	defer srv.Close()
	env := map[string]string{"ENGINED_PG_DSN": rig.dsn, "ENGINED_WEBHOOKS": srv.URL + "/hook", "ENGINED_WEBHOOK_SECRET": feedAdversarySecret}
	d := startServe(t, env, "--redis", rig.env["ENGINED_REDIS_ADDRS"])
	h := newID("ws")
	d.mustApply(t, instructions.New(newID("open"), h).Open())
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		n := taken
		mu.Unlock()
		if n >= 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the receiver never got the first event; stderr:\n%s", d.stderr)
		time.Sleep(50 * time.Millisecond)
	}

	// A forgotten session: a transaction that took an id, left open.
	tx, err := rig.led.Pool().Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SELECT pg_current_xact_id()")
	require.NoError(t, err)

	res := d.mustApply(t, instructions.New(newID("c"), h).Credit("CNY", "1.00"))
	waitInLedger(t, d, h, res.Seq) // committed in the ledger: an event waits for the receiver

	deadline = time.Now().Add(30 * time.Second)
	for {
		lag, err := strconv.ParseFloat(metric(t, d, "atomledger_webhook_lag_ms"), 64)
		require.NoError(t, err)
		if lag > 0 {
			return
		}
		if time.Now().After(deadline) {
			mu.Lock()
			n := taken
			mu.Unlock()
			t.Fatalf("seq %d of %s is in the ledger and the receiver has taken %d of 2 events for 30 s, "+
				"yet atomledger_webhook_lag_ms is %v (\"none waits\")", res.Seq, h, n, lag)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A webhook whose stored cursor the feed refuses (an operator's typo in the
// row docs/feed.md has them insert) never delivers: its lag shows it,
// counted from when delivery first stopped, so that its alert fires.
func TestFeedAdversary_AWebhookStoppedByItsCursorShowsItsLag(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	rig := newLedgerRig(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	_, err := rig.led.Pool().Exec(ctx, "INSERT INTO ledger.webhooks (url, cursor) VALUES ($1, '745.3.alicee')", srv.URL+"/hook")
	require.NoError(t, err)
	env := map[string]string{"ENGINED_PG_DSN": rig.dsn, "ENGINED_WEBHOOKS": srv.URL + "/hook", "ENGINED_WEBHOOK_SECRET": feedAdversarySecret}
	d := startServe(t, env, "--redis", rig.env["ENGINED_REDIS_ADDRS"])
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := metric(t, d, "atomledger_webhook_lag_ms") // "" until the ledger is open
		if lag, err := strconv.ParseFloat(v, 64); err == nil && lag > 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "a webhook stopped by its cursor for 30 s shows lag %q; stderr:\n%s", v, d.stderr)
		time.Sleep(100 * time.Millisecond)
	}
}
