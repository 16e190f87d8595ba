package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
)

// metricValue reads one series without labels from a /metrics page.
func metricValue(t *testing.T, page []byte, name string) float64 {
	t.Helper()
	for line := range strings.Lines(string(page)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, "%s", line)
			return f
		}
	}
	require.FailNow(t, "no series "+name+" on /metrics")
	return 0
}

// TestServe_WritesReplicasDoNotConfirm runs the daemon with
// --min-replica-acks 1 on a master whose one replica is killed. Its writes are answered 503
// UNAVAILABLE, counted on /metrics, shown waiting while they wait, and after
// a few /readyz says why it is not ready; the client learns what the master
// did at once by GET of the instruction's id. Once the replica is restarted
// and synced, /readyz is 200 without any write, and the retry with the same id gets the
// recorded answer, replayed, applied once.
func TestServe_WritesReplicasDoNotConfirm(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := clustertest.Start(sctx, clustertest.Options{Masters: 1, Replicas: 1})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	master, replica := c.Nodes[0].Addr, c.Nodes[1].Addr // masters first

	token := newID("token")
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", strings.Join(c.Addrs(), ","), "--tokens", token,
			"--min-replica-acks", "1"}
	})
	d.url, d.token = "http://"+addr, token
	d.waitHealthy(t)
	require.Eventually(t, func() bool { return d.doWith(t, http.MethodGet, "/readyz", "", nil).status == http.StatusOK },
		2*time.Minute, 50*time.Millisecond, "ready while the replica acknowledges")

	h := newID("ra")
	open := `{"id":"open","holder":"` + h + `","ops":[{"op":"open"},{"op":"credit","asset":"CNY","amount":"100.00"}]}`
	require.Equal(t, http.StatusOK, d.post(t, open).status)

	// Killed rather than stopped: a stopped node holds every client that
	// asks it for the slot map, readiness's own checks too.
	require.NoError(t, c.Kill(replica))

	debit := func(i int) string {
		return `{"id":"d` + strconv.Itoa(i) + `","holder":"` + h + `","ops":[{"op":"debit","asset":"CNY","amount":"1.00"}]}`
	}
	// postWatching posts body and scrapes /metrics until it is answered:
	// whether an answer was seen waiting for replicas.
	postWatching := func(body string) (reply, bool) {
		answered := make(chan reply, 1)
		go func() { answered <- d.post(t, body) }()
		saw := false
		for {
			select {
			case a := <-answered:
				return a, saw
			default:
			}
			m := d.doWith(t, http.MethodGet, "/metrics", "", nil)
			saw = saw || metricValue(t, m.body, "atomledger_replica_wait_answers") >= 1
			time.Sleep(5 * time.Millisecond) // a scrape at a time, not a loop that takes a core
		}
	}
	applied := 0 // debits the master applied
	t.Run("a write the replica does not confirm is answered 503 and shown waiting", func(t *testing.T) {
		a, saw := postWatching(debit(1))
		applied++
		wantErrorAnswer(t, a, http.StatusServiceUnavailable, "UNAVAILABLE")
		assert.Contains(t, string(a.body), "not known to be on a replica")
		// Each answer waits a second for the replica; a machine too busy to
		// scrape within it gets another write, still unconfirmed, until one
		// is seen waiting (up to 90, two minutes of them: the holder has
		// the money).
		for i := 100; !saw && i < 190; i++ {
			a, saw = postWatching(debit(i))
			applied++
			wantErrorAnswer(t, a, http.StatusServiceUnavailable, "UNAVAILABLE")
		}
		assert.True(t, saw, "atomledger_replica_wait_answers showed an answer waiting")
		m := d.doWith(t, http.MethodGet, "/metrics", "", nil)
		assert.Equal(t, float64(applied), metricValue(t, m.body, "atomledger_replica_unconfirmed_total"))
		assert.Zero(t, metricValue(t, m.body, "atomledger_replica_wait_answers"), "none waits once answered")
	})

	t.Run("after a few, /readyz says writes to the master cannot be confirmed", func(t *testing.T) {
		for i := 2; i <= 3; i++ {
			wantErrorAnswer(t, d.post(t, debit(i)), http.StatusServiceUnavailable, "UNAVAILABLE")
			applied++
		}
		a := d.doWith(t, http.MethodGet, "/readyz", "", nil)
		wantErrorAnswer(t, a, http.StatusServiceUnavailable, "UNAVAILABLE")
		assert.Contains(t, string(a.body), "writes to master "+master+" cannot be confirmed")
	})

	t.Run("GET by id tells what the master did, at once", func(t *testing.T) {
		a := d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/d1", "")
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		var got struct {
			Source string `json:"source"`
			Result struct {
				Seq int64 `json:"seq"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(a.body, &got), "%s", a)
		assert.Equal(t, "redis", got.Source)
		assert.Equal(t, int64(2), got.Result.Seq, "%s", a)
	})

	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	require.NoError(t, c.Restart(rctx, replica))
	cancel()

	t.Run("once the replica has synced again, /readyz is 200 with no write", func(t *testing.T) {
		require.Eventually(t, func() bool { return d.doWith(t, http.MethodGet, "/readyz", "", nil).status == http.StatusOK },
			2*time.Minute, 100*time.Millisecond, "ready again")
	})

	t.Run("the retry with the same id gets the recorded answer, applied once", func(t *testing.T) {
		a := d.post(t, debit(1))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		var res struct {
			Seq      int64 `json:"seq"`
			Replayed bool  `json:"replayed"`
		}
		require.NoError(t, json.Unmarshal(a.body, &res))
		assert.True(t, res.Replayed)
		assert.Equal(t, int64(2), res.Seq)
		var st struct {
			Seq      int64 `json:"seq"`
			Balances map[string]struct {
				Available string `json:"available"`
			} `json:"balances"`
		}
		require.NoError(t, json.Unmarshal([]byte(d.state(t, h)), &st))
		assert.Equal(t, int64(1+applied), st.Seq, "each write applied once")
		assert.Equal(t, strconv.Itoa(100-applied)+".00", st.Balances["CNY"].Available)
	})
}
