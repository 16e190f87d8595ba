package ledger_test

import (
	"context"
	"flag"
	"fmt"
	"os"
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
)

// One PostgreSQL server (a fresh database per test) and one Redis Cluster,
// which makes the events: real ones, from the real script.
var (
	pg  *pgtest.Server
	rdb *redis.ClusterClient
	eng *engine.Engine
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var err error
	pg, err = pgtest.StartForMain(ctx)
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "start postgresql:", err)
		os.Exit(1)
	}
	c, err := clustertest.StartForMain(ctx, clustertest.Options{Masters: 3})
	cancel()
	if err != nil {
		_ = pg.Close()
		fmt.Fprintln(os.Stderr, "start redis cluster:", err)
		os.Exit(1)
	}
	rdb = c.Client(nil)
	eng = engine.New(rdb, nil)
	code := m.Run()
	_ = rdb.Close()
	_ = c.Stop()
	_ = pg.Close()
	os.Exit(code)
}

func needServers(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL and Redis")
	}
}

// openLedger opens a ledger on a fresh database.
func openLedger(t testing.TB) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(context.Background(), pg.NewDatabase(t), nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return l
}

// apply applies instructions in batches and returns how many were applied.
func apply(t testing.TB, ins []instructions.Instruction) int {
	t.Helper()
	n := 0
	for lo := 0; lo < len(ins); lo += 500 {
		for _, o := range eng.ApplyBatch(context.Background(), ins[lo:min(lo+500, len(ins))]) {
			if o.Err == nil {
				n++
			} else {
				var e *engine.Error
				require.ErrorAs(t, o.Err, &e)
				require.NotEqual(t, instructions.CodeUnavailable, e.Code, "%v", o.Err)
				require.NotEqual(t, instructions.CodeInternal, e.Code, "%v", o.Err)
			}
		}
	}
	return n
}

// outboxEvents reads, in stream order, the events of holders from their
// slots' outboxes.
func outboxEvents(t testing.TB, holders []string) []map[string]string {
	t.Helper()
	want := map[string]bool{}
	slots := map[int]bool{}
	for _, h := range holders {
		want[h] = true
		slots[cluster.HolderSlot(h)] = true
	}
	var out []map[string]string
	for slot := range slots {
		msgs, err := rdb.XRange(context.Background(), cluster.Outbox(slot), "-", "+").Result()
		require.NoError(t, err)
		for _, m := range msgs {
			f := map[string]string{}
			for k, v := range m.Values {
				f[k] = v.(string)
			}
			if want[f["holder"]] {
				out = append(out, f)
			}
		}
	}
	return out
}
