package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/pgtest"
)

// tlsEnv is the environment naming a TLS Redis at addrs with tc's authority
// and client certificate, verified against the name "localhost".
func tlsEnv(tc *clustertest.TLS, addrs []string) map[string]string {
	return map[string]string{
		"ENGINED_REDIS_ADDRS":           strings.Join(addrs, ","),
		"ENGINED_REDIS_TLS_CA":          tc.CAFile,
		"ENGINED_REDIS_TLS_CERT":        tc.ClientCert,
		"ENGINED_REDIS_TLS_KEY":         tc.ClientKey,
		"ENGINED_REDIS_TLS_SERVER_NAME": "localhost",
	}
}

// runIn runs an engined command in process with env as its whole
// environment and stdin as its input.
func runIn(env map[string]string, stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

// TestRedisTLS_Standalone applies instructions to a single Redis that
// speaks TLS only and wants a client certificate: with the authority, the
// certificate and the right server name it works; without any of them the
// connection is refused and nothing is applied.
func TestRedisTLS_Standalone(t *testing.T) {
	needRedis(t)
	t.Parallel()
	tc, err := clustertest.NewTLS(t.TempDir())
	require.NoError(t, err)
	c := clustertest.StartForTest(t, clustertest.Options{Standalone: true, TLS: tc})
	env := tlsEnv(tc, c.Addrs())
	holder := newID("tls")
	open := instructionJSON(newID("open"), holder, `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "5.00"}]`)

	without := func(drop ...string) map[string]string {
		e := map[string]string{"ENGINED_REDIS_TLS": "true"}
		for k, v := range env {
			e[k] = v
		}
		for _, k := range drop {
			delete(e, k)
		}
		return e
	}
	refusals := []struct {
		name string
		env  map[string]string
		want string // a regular expression
	}{
		{"plain TCP", map[string]string{"ENGINED_REDIS_ADDRS": env["ENGINED_REDIS_ADDRS"]}, "UNAVAILABLE"},
		{"the system's roots only", without("ENGINED_REDIS_TLS_CA"), "certificate"},
		// TLS 1.3 checks the client's certificate after the client's side of
		// the handshake is done: the server's alert may lose the race with
		// the client's first write, which then meets the closed connection.
		{"no client certificate", without("ENGINED_REDIS_TLS_CERT", "ENGINED_REDIS_TLS_KEY"), "certificate required|connection reset by peer|broken pipe"},
		{"another server name", func() map[string]string {
			e := without()
			e["ENGINED_REDIS_TLS_SERVER_NAME"] = "redis.example"
			return e
		}(), "redis.example"},
	}
	for _, r := range refusals {
		t.Run("refused: "+r.name, func(t *testing.T) {
			code, out, errOut := runIn(r.env, open, "apply", "-f", "-")
			assert.NotEqual(t, exitOK, code, "stdout: %s", out)
			assert.Regexp(t, r.want, out+errOut)
		})
	}
	t.Run("nothing was applied by the refused runs, and the configured one applies", func(t *testing.T) {
		code, out, errOut := runIn(env, open, "apply", "-f", "-")
		require.Equal(t, exitOK, code, "stderr: %s", errOut)
		var res instructions.Result
		strictJSON(t, out, &res)
		assert.Equal(t, int64(1), res.Seq)
		assert.False(t, res.Replayed)
	})
}

// TestRedisTLS_Cluster runs the daemon with its relay on a Redis Cluster
// that speaks TLS only (clients, cluster bus, replication) with mutual TLS:
// instructions apply, a transfer between two masters commits, the relay
// carries the events to PostgreSQL, and after a master is killed and its
// replica promoted the daemon applies to the promoted one.
func TestRedisTLS_Cluster(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	tc, err := clustertest.NewTLS(t.TempDir())
	require.NoError(t, err)
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := clustertest.Start(sctx, clustertest.Options{Masters: 3, Replicas: 1, TLS: tc})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	dsn := pgtest.StartForTest(t).NewDatabase(t)
	led, err := ledger.Open(ctx, dsn, nil)
	require.NoError(t, err)
	t.Cleanup(led.Close)

	env := tlsEnv(tc, c.Addrs())
	env["ENGINED_PG_DSN"] = dsn
	token := newID("token")
	d, addr := listenOnFreeAddr(t, "", env, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--tokens", token, "--min-replica-acks", "1"}
	})
	d.url, d.token = "http://"+addr, token
	d.waitHealthy(t)

	payer, payee := idsOnTwoMasters(t, c)
	first, err := c.MasterOf(ctx, cluster.HolderSlot(payer))
	require.NoError(t, err)
	d.mustApply(t, instructions.New(newID("open"), payer).Open().Credit("CNY", "100.00"))
	d.mustApply(t, instructions.New(newID("open"), payee).Open())
	st := wantTransfer(t, d.do(t, http.MethodPost, "/v1/transfers", payment(newID("pay"), payer, payee, "30.00")), http.StatusOK)
	require.Equal(t, "committed", string(st.Status), "%+v", st)

	// The relay carries every event to the ledger.
	inLedger := func(holder string, seq int64) func() bool {
		return func() bool {
			snaps, err := led.Snapshots(ctx, []string{holder}, 0)
			return err == nil && snaps[holder] != nil && snaps[holder].Seq == seq
		}
	}
	var p, q instructions.State
	strictJSON(t, d.state(t, payer), &p)
	strictJSON(t, d.state(t, payee), &q)
	require.Eventually(t, inLedger(payer, p.Seq), 2*time.Minute, 20*time.Millisecond, "the payer's events reach the ledger")
	require.Eventually(t, inLedger(payee, q.Seq), 2*time.Minute, 20*time.Millisecond, "the payee's events reach the ledger")

	// A failover: the payer's master dies, its replica (synced over TLS, and
	// holding every answered write: --min-replica-acks 1) takes over.
	require.NoError(t, c.Kill(first))
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	promoted, err := c.WaitFailover(fctx, first)
	cancel()
	require.NoError(t, err)
	t.Logf("killed master %s; %s promoted", first, promoted)
	// Back as the promoted master's replica (a full sync over TLS): with
	// --min-replica-acks 1, writes there need it.
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	require.NoError(t, c.Restart(rctx, first))
	require.NoError(t, c.WaitReady(rctx))
	cancel()
	credit := instructionJSON(newID("credit"), payer, `[{"op": "credit", "asset": "CNY", "amount": "1.00"}]`)
	var a reply
	require.Eventually(t, func() bool {
		// The same id each time: a retry of an UNAVAILABLE answer.
		a = d.post(t, credit)
		return a.status != http.StatusServiceUnavailable
	}, 2*time.Minute, 100*time.Millisecond, "the daemon finds the promoted master")
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	var res instructions.Result
	strictJSON(t, string(a.body), &res)
	assert.Equal(t, p.Seq+1, res.Seq, "the payer's history survived the failover")
	assert.Equal(t, instructions.Balance{Available: "71.00", Frozen: "0.00"}, res.Balances["CNY"])
	require.Eventually(t, inLedger(payer, res.Seq), 2*time.Minute, 20*time.Millisecond, "the relay carries the new master's event")
}

// TestRedisTLS_Sentinel applies an instruction through Sentinel when the
// sentinels and the servers all speak TLS only: the same flags reach both.
func TestRedisTLS_Sentinel(t *testing.T) {
	needRedis(t)
	t.Parallel()
	tc, err := clustertest.NewTLS(t.TempDir())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	s, err := clustertest.StartSentinel(ctx, clustertest.SentinelOptions{Sentinels: 1, TLS: tc})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	env := tlsEnv(tc, s.SentinelAddrs())
	env["ENGINED_REDIS_MASTER"] = s.MasterName
	holder := newID("tls")
	open := instructionJSON(newID("open"), holder, `[{"op": "open"}]`)
	code, out, errOut := runIn(env, open, "apply", "-f", "-")
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", out, errOut)
	var res instructions.Result
	strictJSON(t, out, &res)
	assert.Equal(t, int64(1), res.Seq)

	delete(env, "ENGINED_REDIS_TLS_CERT")
	delete(env, "ENGINED_REDIS_TLS_KEY")
	code, out, _ = runIn(env, instructionJSON(newID("open"), newID("tls"), `[{"op": "open"}]`), "apply", "-f", "-")
	assert.NotEqual(t, exitOK, code, "without the client certificate: %s", out)
}
