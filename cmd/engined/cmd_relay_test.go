package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/ledgertest"
	"github.com/atomledger/atomledger/ledger/pgtest"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/reconcile"
	"github.com/atomledger/atomledger/stored"
)

// ledgerRig is a cluster of its own (the relay takes every outbox, so it
// must not share one with other tests), a PostgreSQL server and a ledger.
type ledgerRig struct {
	c   *clustertest.Cluster
	pg  *pgtest.Server
	dsn string
	rdb *redis.ClusterClient // eng's
	eng *engine.Engine
	led *ledger.Ledger
	env map[string]string
}

func newLedgerRig(t *testing.T) *ledgerRig {
	t.Helper()
	return newLedgerRigOn(t, clustertest.StartForTest(t, clustertest.Options{Masters: 3}))
}

// newLedgerRigOn builds the rig on a cluster the caller started.
func newLedgerRigOn(t *testing.T, c *clustertest.Cluster) *ledgerRig {
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
func (r *ledgerRig) startRelay(t *testing.T, opt *outbox.Options) *outbox.Relay {
	t.Helper()
	rdb := r.c.Client(nil)
	if opt == nil {
		opt = &outbox.Options{DiscoverInterval: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	}
	relay := outbox.NewRelay(rdb, r.led, opt)
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
// The deadline is generous: the relay drains slowly under -race on a loaded
// machine, and only a failing run reaches it (the report then says what is
// in flight).
func (r *ledgerRig) waitInSync(t *testing.T) *reconcile.Report {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		rep, err := reconcile.Run(context.Background(), r.eng, r.led, nil)
		require.NoError(t, err)
		if rep.EventsInFlight == 0 || time.Now().After(deadline) {
			return rep
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRelay_EndToEndThroughPostgreSQLDowntime applies 20,000 random
// instructions over 500 holders while the relay runs, with PostgreSQL
// stopped for 10 seconds in the middle of the load, then lets the relay
// drain: nothing lost, nothing applied twice, every event's entries
// balanced, and the ledger's seq and digest equal to Redis's for every
// holder.
func TestRelay_EndToEndThroughPostgreSQLDowntime(t *testing.T) {
	needRedis(t)
	const holders, load, downtime = 500, 20000, 10 * time.Second
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := newLedgerRig(t)
	w := ledgertest.New(seed, "e2e", holders)
	relay := r.startRelay(t, nil)
	began := time.Now()
	applied := r.applyAll(t, w.Opens())
	ins := make([]instructions.Instruction, load)
	for i := range ins {
		ins[i] = w.Next()
	}
	// Two fifths before the downtime, two fifths during it, the rest once
	// PostgreSQL is back, while the relay catches up.
	applied += r.applyAll(t, ins[:load*2/5])

	require.NoError(t, r.pg.Stop(), "PostgreSQL goes down in the middle of the load")
	down := time.Now()
	applied += r.applyAll(t, ins[load*2/5:load*4/5])
	time.Sleep(time.Until(down.Add(downtime)))
	assert.Eventually(t, func() bool { return relay.Stats().SinkDown }, time.Minute, 10*time.Millisecond, "the relay noticed")
	relayedBefore := relay.Stats().Relayed
	require.NoError(t, r.pg.Restart(ctx))
	up := time.Now()
	t.Logf("PostgreSQL down for %v", up.Sub(down).Round(time.Millisecond))
	applied += r.applyAll(t, ins[load*4/5:])

	rep := r.waitInSync(t)
	drained := time.Since(up)
	st := relay.Stats()
	t.Logf("%d instructions applied in Redis; drained %v after PostgreSQL came back (%d events, %.0f events/s); whole test so far %v; relay %+v; ledger %+v",
		applied, drained.Round(time.Millisecond), st.Relayed-relayedBefore, float64(st.Relayed-relayedBefore)/drained.Seconds(),
		time.Since(began).Round(time.Millisecond), st, r.led.Stats())
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Zero(t, rep.EventsInFlight)
	assert.Equal(t, len(w.Holders), rep.InSync)
	assert.Empty(t, rep.Unbalanced, "every event's entries sum to zero per asset")
	assert.Empty(t, rep.AccountDrift)
	assert.Zero(t, rep.Parked)
	// The relay counts a batch once its commit has returned: reconcile can
	// see the last one committed before it is counted.
	for deadline := time.Now().Add(time.Minute); r.led.Stats().Applied < int64(applied) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, int64(applied), r.led.Stats().Applied, "nothing lost, nothing applied twice")
	assert.Zero(t, r.led.Stats().Refused)
	var rows, ids int64
	require.NoError(t, r.led.Pool().QueryRow(ctx, "SELECT count(*), count(DISTINCT (holder, id)) FROM ledger.instructions").Scan(&rows, &ids))
	assert.Equal(t, int64(applied), rows, "one ledger row per applied instruction")
	assert.Equal(t, rows, ids, "no instruction twice")

	// PostgreSQL's seq and digest equal Redis's, holder by holder (reconcile
	// compared them too; this says it without going through it).
	fromRedis, err := r.eng.Snapshots(ctx, w.Holders)
	require.NoError(t, err)
	fromPG, err := r.led.Snapshots(ctx, w.Holders, 0)
	require.NoError(t, err)
	for _, h := range w.Holders {
		rs, ps := fromRedis[h], fromPG[h]
		if assert.NotNil(t, rs, h) && assert.NotNil(t, ps, h) {
			assert.Equal(t, rs.Seq, ps.Seq, h)
			assert.Equal(t, rs.Digest, ps.Digest, h)
		}
	}

	// Every outbox is empty: each event was deleted once committed (the
	// backlog is measured at the relay's discoveries).
	deadline := time.Now().Add(time.Minute)
	for relay.Stats().Backlog != 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	assert.Zero(t, relay.Stats().Backlog)

	t.Run("reconcile reports each kind of drift", func(t *testing.T) {
		ctx := context.Background()
		h := w.Holders
		// Drift made by hand: the ledger one behind while the outbox no
		// longer has that event (the relay deleted it: lost on its way), the
		// ledger one ahead, a figure changed in Redis, a holder gone from
		// Redis, an entry without its other side.
		_, err := r.led.Pool().Exec(ctx, "UPDATE ledger.holders SET seq = seq - 1 WHERE holder = $1", h[0])
		require.NoError(t, err)
		_, err = r.led.Pool().Exec(ctx, "UPDATE ledger.holders SET seq = seq + 1 WHERE holder = $1", h[1])
		require.NoError(t, err)
		require.NoError(t, r.c.Client(nil).HSet(ctx, cluster.Holder(h[2]), stored.PrefixBalance+"CNY", "1").Err())
		require.NoError(t, r.c.Client(nil).Del(ctx, cluster.Holder(h[3])).Err())
		_, err = r.led.Pool().Exec(ctx, `INSERT INTO ledger.entries (holder, seq, n, op_index, account, account_kind, asset, amount)
			VALUES ($1, 1, 999, 0, 'external', 'cp', 'CNY', 5)`, h[4])
		require.NoError(t, err)

		out := filepath.Join(t.TempDir(), "report.json")
		code, stdout, stderr := r.run("reconcile", "--out", out)
		assert.Equal(t, exitDrift, code, "stderr: %s", stderr)
		t.Log("\n" + stdout)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var rep reconcile.Report
		require.NoError(t, json.Unmarshal(data, &rep))
		kinds := map[string]string{}
		for _, f := range rep.Findings {
			kinds[f.Holder] = f.Kind
		}
		assert.Equal(t, reconcile.KindLostInRelay, kinds[h[0]])
		assert.Equal(t, reconcile.KindPGAhead, kinds[h[1]])
		assert.Equal(t, reconcile.KindMismatch, kinds[h[2]])
		assert.Equal(t, reconcile.KindMissingInRedis, kinds[h[3]])
		assert.Len(t, rep.Unbalanced, 1)
		assert.NotEmpty(t, rep.AccountDrift)
		assert.True(t, rep.Drift)
	})
}

// TestReconcile_100kHolders measures, with ATOMLEDGER_LONG set, how long the
// relay takes to carry the events of 100,000 new holders to PostgreSQL, and
// how long "engined reconcile" takes over them (docs/ledger.md gives the
// figures). Run it without the race detector:
//
//	ATOMLEDGER_LONG=1 go test -count=1 -run TestReconcile_100kHolders -v ./cmd/engined/
func TestReconcile_100kHolders(t *testing.T) {
	if os.Getenv("ATOMLEDGER_LONG") == "" {
		t.Skip("set ATOMLEDGER_LONG=1 to run")
	}
	needRedis(t)
	const holders = 100000
	ctx := context.Background()
	r := newLedgerRig(t)
	w := ledgertest.New(uint64(time.Now().UnixNano()), "rc", holders)
	start := time.Now()
	applied := r.applyAll(t, w.Opens())
	require.Equal(t, holders, applied)
	t.Logf("%d holders opened in Redis in %v", holders, time.Since(start).Round(time.Millisecond))

	// The relay starts with every event waiting: it runs flat out.
	start = time.Now()
	relay := r.startRelay(t, &outbox.Options{PollInterval: 20 * time.Millisecond})
	deadline := time.Now().Add(10 * time.Minute)
	var rows int64
	var discovered time.Time // the relay's first discovery joined every outbox
	for time.Now().Before(deadline) {
		if discovered.IsZero() && relay.Stats().Streams > 0 {
			discovered = time.Now()
		}
		require.NoError(t, r.led.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.instructions").Scan(&rows))
		if rows == holders {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	require.EqualValues(t, holders, rows)
	t.Logf("relay: %d events into PostgreSQL in %v from its start (%.0f events/s), %v after its first discovery joined every outbox (%v): %.0f events/s",
		rows, took.Round(time.Millisecond), float64(rows)/took.Seconds(), time.Since(discovered).Round(time.Millisecond),
		discovered.Sub(start).Round(time.Millisecond), float64(rows)/time.Since(discovered).Seconds())
	for relay.Stats().Backlog != 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("relay %+v", relay.Stats())

	out := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(buildEngined(t), "reconcile", "--out", out)
	cmd.Env = childEnv(r.env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start = time.Now()
	err := cmd.Run()
	took = time.Since(start)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	t.Logf("engined reconcile over %d holders: %v\n%s", holders, took.Round(time.Millisecond), stdout.String())
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep reconcile.Report
	require.NoError(t, json.Unmarshal(data, &rep))
	assert.False(t, rep.Drift)
	assert.Equal(t, holders, rep.InSync)
}
