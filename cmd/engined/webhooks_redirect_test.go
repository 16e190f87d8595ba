package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// docs/feed.md: "A receiver answers 2xx once it has the batch ... Anything
// else ... and the daemon sends the same events again". A receiver whose
// POST endpoint answers 303 (moved, a login page, a load balancer's
// redirect) never took the batch: the daemon counts a failure and sends it
// again. Before, its client followed the redirect with a GET, without the
// body, got 200 from the target, and counted the batch taken: the cursor
// moved and the events were lost for good to that receiver.
func TestWebhooks_ARedirectIsNotADelivery(t *testing.T) {
	needRedis(t)
	const secret = "a-webhook-secret-for-tests"
	rig := newLedgerRig(t)
	var mu sync.Mutex
	var redirected, taken int
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		redirected++
		mu.Unlock()
		http.Redirect(w, r, "/elsewhere", http.StatusSeeOther)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.Method == http.MethodPost && len(body) > 0 {
			taken++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK) // e.g. a landing page
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	env := map[string]string{"ENGINED_PG_DSN": rig.dsn, "ENGINED_WEBHOOKS": srv.URL + "/hook", "ENGINED_WEBHOOK_SECRET": secret}
	d := startServe(t, env, "--redis", rig.env["ENGINED_REDIS_ADDRS"])
	d.mustApply(t, instructions.New(newID("open"), newID("wr")).Open())

	// Wait until the daemon has tried the receiver at least twice.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		n := redirected
		mu.Unlock()
		delivered, _ := strconv.Atoi(metric(t, d, "atomledger_webhook_events_total"))
		if n >= 2 || delivered > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the daemon never reached the receiver; stderr:\n%s", d.stderr)
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Zero(t, taken, "no POST with the batch ever reached a 2xx")
	assert.Equal(t, "0", metric(t, d, "atomledger_webhook_events_total"),
		"the batch was answered 303, never 2xx, yet the daemon counts it delivered and moved the cursor")
	assert.NotEqual(t, "0", metric(t, d, "atomledger_webhook_failures_total"), "a 303 is a failure to retry")
}
