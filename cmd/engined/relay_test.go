package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/ledgertest"
	"github.com/atomledger/atomledger/ledger/pgtest"
)

// ledgerRig is a cluster of its own (the relay takes every outbox, so it
// must not share one with other tests), a PostgreSQL server and a ledger.
type ledgerRig struct {
	c   *cluster.Cluster
	pg  *pgtest.Server
	dsn string
	rdb *redis.ClusterClient // eng's
	eng *engine.Engine
	led *ledger.Ledger
	env map[string]string
}

func newLedgerRig(t *testing.T) *ledgerRig {
	t.Helper()
	return newLedgerRigOn(t, cluster.StartForTest(t, cluster.Options{Masters: 3}))
}

// newLedgerRigOn builds the rig on a cluster the caller started.
func newLedgerRigOn(t *testing.T, c *cluster.Cluster) *ledgerRig {
	t.Helper()
	r := &ledgerRig{c: c, pg: pgtest.StartForTest(t)}
	r.dsn = r.pg.NewDatabase(t)
	r.rdb = r.c.Client(nil)
	t.Cleanup(func() { _ = r.rdb.Close() })
	r.eng = engine.New(r.rdb, nil)
	var err error
	r.led, err = ledger.Open(context.Background(), r.dsn, nil)
	require.NoError(t, err)
	t.Cleanup(r.led.Close)
	addrs := ""
	for i, a := range r.c.Addrs() {
		if i > 0 {
			addrs += ","
		}
		addrs += a
	}
	r.env = map[string]string{"ENGINED_REDIS_ADDRS": addrs, "ENGINED_PG_DSN": r.dsn}
	return r
}

// run runs an engined command in process.
func (r *ledgerRig) run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, getenv: func(k string) string { return r.env[k] }})
	return code, out.String(), errb.String()
}

// startRelay runs a relay until the test ends. A nil opt discovers new
// outboxes every 200 ms and polls every 20 ms.
func (r *ledgerRig) startRelay(t *testing.T, opt *engine.RelayOptions) *engine.Relay {
	t.Helper()
	rdb := r.c.Client(nil)
	if opt == nil {
		opt = &engine.RelayOptions{DiscoverInterval: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	}
	relay := engine.NewRelay(rdb, r.led, opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = relay.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = rdb.Close() })
	return relay
}

func (r *ledgerRig) applyAll(t *testing.T, ins []instructions.Instruction) int {
	t.Helper()
	n := 0
	for lo := 0; lo < len(ins); lo += 500 {
		for _, o := range r.eng.ApplyBatch(context.Background(), ins[lo:min(lo+500, len(ins))]) {
			if o.Err == nil {
				n++
			} else {
				require.NotErrorIs(t, o.Err, engine.ErrUnavailable)
			}
		}
	}
	return n
}

// waitInSync waits until reconcile sees no event in flight, and returns its report.
func (r *ledgerRig) waitInSync(t *testing.T, within time.Duration) *Report {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		rep, err := reconcile(context.Background(), r.eng, r.led, nil)
		require.NoError(t, err)
		if rep.EventsInFlight == 0 || time.Now().After(deadline) {
			return rep
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRelay_EndToEndThroughPostgreSQLDowntime(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	w := ledgertest.New(uint64(time.Now().UnixNano()), "e2e", 300)
	relay := r.startRelay(t, nil)
	applied := r.applyAll(t, w.Opens())
	var ins []instructions.Instruction
	for range 6000 {
		ins = append(ins, w.Next())
	}
	applied += r.applyAll(t, ins[:3000])

	require.NoError(t, r.pg.Stop(), "PostgreSQL goes down in the middle of the load")
	applied += r.applyAll(t, ins[3000:])
	time.Sleep(time.Second)
	assert.True(t, relay.Stats().SinkDown, "the relay noticed")
	require.NoError(t, r.pg.Restart(context.Background()))

	start := time.Now()
	rep := r.waitInSync(t, 60*time.Second)
	t.Logf("drained in %v after PostgreSQL came back; relay %+v; ledger %+v", time.Since(start), relay.Stats(), r.led.Stats())
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Equal(t, len(w.Holders), rep.InSync)
	assert.Equal(t, int64(applied), r.led.Stats().Applied, "nothing lost, nothing applied twice")
	assert.Zero(t, r.led.Stats().Refused)

	// Every outbox is empty: each event was deleted once committed.
	deadline := time.Now().Add(5 * time.Second)
	for relay.Stats().Backlog != 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	assert.Zero(t, relay.Stats().Backlog)

	t.Run("reconcile reports each kind of drift", func(t *testing.T) {
		ctx := context.Background()
		h := w.Holders
		// Drift made by hand: the ledger one behind (events in flight, not
		// drift), the ledger one ahead, a figure changed in Redis, a holder gone
		// from Redis, an entry without its other side.
		_, err := r.led.Pool().Exec(ctx, "UPDATE ledger.holders SET seq = seq - 1 WHERE holder = $1", h[0])
		require.NoError(t, err)
		_, err = r.led.Pool().Exec(ctx, "UPDATE ledger.holders SET seq = seq + 1 WHERE holder = $1", h[1])
		require.NoError(t, err)
		hk := cluster.Holder(h[2])
		require.NoError(t, r.c.Client(nil).HSet(ctx, hk.Balance, "CNY", "1").Err())
		require.NoError(t, r.c.Client(nil).Del(ctx, cluster.Holder(h[3]).Meta).Err())
		_, err = r.led.Pool().Exec(ctx, `INSERT INTO ledger.entries (holder, seq, n, op_index, account, account_kind, asset, amount)
			VALUES ($1, 1, 999, 0, 'external', 'cp', 'CNY', 5)`, h[4])
		require.NoError(t, err)

		out := filepath.Join(t.TempDir(), "report.json")
		code, stdout, stderr := r.run("reconcile", "--out", out)
		assert.Equal(t, exitDrift, code, "stderr: %s", stderr)
		t.Log("\n" + stdout)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var rep Report
		require.NoError(t, json.Unmarshal(data, &rep))
		kinds := map[string]string{}
		for _, f := range rep.Findings {
			kinds[f.Holder] = f.Kind
		}
		assert.Equal(t, kindInFlight, kinds[h[0]])
		assert.Equal(t, kindPGAhead, kinds[h[1]])
		assert.Equal(t, kindMismatch, kinds[h[2]])
		assert.Equal(t, kindMissingInRedis, kinds[h[3]])
		assert.Len(t, rep.Unbalanced, 1)
		assert.NotEmpty(t, rep.AccountDrift)
		assert.True(t, rep.Drift)
	})
}
