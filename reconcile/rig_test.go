package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/pgtest"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// needRedis skips under -short; otherwise each test starts its servers.
func needRedis(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis and PostgreSQL; skipped under -short")
	}
}

// ledgerRig is a cluster of its own (the relay takes every outbox, so it
// must not share one with other tests), a PostgreSQL server and a ledger.
type ledgerRig struct {
	c   *clustertest.Cluster
	rdb *redis.ClusterClient // eng's
	eng *engine.Engine
	led *ledger.Ledger
	dsn string // the ledger's database
}

func newLedgerRig(t *testing.T) *ledgerRig {
	t.Helper()
	return newLedgerRigOf(t, 3)
}

// newLedgerRigOf is newLedgerRig with a cluster of masters masters.
func newLedgerRigOf(t *testing.T, masters int) *ledgerRig {
	t.Helper()
	r := &ledgerRig{c: clustertest.StartForTest(t, clustertest.Options{Masters: masters})}
	r.dsn = pgtest.StartForTest(t).NewDatabase(t)
	r.rdb = r.c.Client(nil)
	t.Cleanup(func() { _ = r.rdb.Close() })
	r.eng = engine.New(r.rdb, nil)
	var err error
	r.led, err = ledger.Open(context.Background(), r.dsn, nil)
	require.NoError(t, err)
	t.Cleanup(r.led.Close)
	return r
}

// startRelay runs a relay until the test ends, discovering new outboxes
// every 200 ms and polling every 20 ms.
func (r *ledgerRig) startRelay(t *testing.T) *outbox.Relay {
	t.Helper()
	rdb := r.c.Client(nil)
	relay := outbox.NewRelay(rdb, r.led, &outbox.Options{DiscoverInterval: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = relay.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = rdb.Close() })
	return relay
}

func (r *ledgerRig) applyAll(t *testing.T, ins []instructions.Instruction) {
	t.Helper()
	for lo := 0; lo < len(ins); lo += 500 {
		for _, o := range r.eng.ApplyBatch(context.Background(), ins[lo:min(lo+500, len(ins))]) {
			if o.Err != nil {
				require.NotErrorIs(t, o.Err, engine.ErrUnavailable)
			}
		}
	}
}

// run is Run with the default options.
func (r *ledgerRig) run(t *testing.T) *Report {
	t.Helper()
	rep, err := Run(context.Background(), r.eng, r.led, nil)
	require.NoError(t, err)
	return rep
}

// waitInSync waits until Run sees no event in flight, and returns its report.
// The deadline is generous: the relay drains slowly under -race on a loaded
// machine, and only a failing run reaches it (the report then says what is
// in flight).
func (r *ledgerRig) waitInSync(t *testing.T) *Report {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		rep := r.run(t)
		if rep.EventsInFlight == 0 || time.Now().After(deadline) {
			return rep
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// eventsOf reads holder's events from its slot's outbox, in seq order.
func (r *ledgerRig) eventsOf(t *testing.T, holder string) []map[string]string {
	t.Helper()
	msgs, err := r.rdb.XRange(context.Background(), cluster.Outbox(cluster.HolderSlot(holder)), "-", "+").Result()
	require.NoError(t, err)
	var out []map[string]string
	for _, m := range msgs {
		f := map[string]string{}
		for k, v := range m.Values {
			f[k] = v.(string)
		}
		if f["holder"] == holder {
			out = append(out, f)
		}
	}
	return out
}

// deliver does what the relay does with holder's events: writes them to
// the ledger, then deletes them from the outbox.
func (r *ledgerRig) deliver(t *testing.T, h string) {
	t.Helper()
	ctx := context.Background()
	outbox := cluster.Outbox(cluster.HolderSlot(h))
	msgs, err := r.rdb.XRange(ctx, outbox, "-", "+").Result()
	require.NoError(t, err)
	evs := r.eventsOf(t, h)
	if len(evs) > 0 {
		require.NoError(t, r.led.Write(ctx, stored.Entries(evs...)))
	}
	for _, m := range msgs {
		if m.Values["holder"] == h {
			require.NoError(t, r.rdb.XDel(ctx, outbox, m.ID).Err())
		}
	}
}
