package ledger_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/ledgertest"
)

// The size of BenchmarkReconcileScale's ledger.
var (
	scaleHolders   = flag.Int("scale.holders", 100000, "BenchmarkReconcileScale: holders")
	scaleTransfers = flag.Int("scale.transfers", 1000000, "BenchmarkReconcileScale: settled transfers (a multiple of the holders)")
)

// step is one of reconcile's reads of the ledger and how long it took.
type step struct {
	name string
	took time.Duration
}

// reconcileReads makes the reads of the ledger that reconcile.Run makes, in
// its order, over every holder, and checks what they find: every holder in
// the ledger, the open transfers, nothing wrong in the books. It returns how
// long each took and how many entries the audit read.
func reconcileReads(tb testing.TB, l *ledger.Ledger, holders, open int) (steps []step, audited int64) {
	tb.Helper()
	ctx := context.Background()
	timed := func(name string, f func()) {
		start := time.Now()
		f()
		steps = append(steps, step{name, time.Since(start)})
	}
	var hs []string
	timed("holders", func() {
		var err error
		hs, err = l.Holders(ctx)
		require.NoError(tb, err)
	})
	require.Len(tb, hs, holders)
	timed("refused", func() {
		_, err := l.RefusedCount(ctx)
		require.NoError(tb, err)
	})
	timed("snapshots", func() {
		for lo := 0; lo < len(hs); lo += 1000 {
			snaps, err := l.Snapshots(ctx, hs[lo:min(lo+1000, len(hs))], 0)
			require.NoError(tb, err)
			require.Len(tb, snaps, min(1000, len(hs)-lo))
		}
	})
	timed("unsettled_transfers", func() {
		got, err := l.UnsettledTransfers(ctx, 1000)
		require.NoError(tb, err)
		assert.Len(tb, got, min(open, 1000))
		for _, t := range got {
			assert.Equal(tb, map[string]string{"CNY": "100"}, t.Clearing, t.Transfer)
			assert.True(tb, strings.HasPrefix(t.Transfer, "pay-"), t.Transfer)
			assert.EqualValues(tb, 2, t.Prepared, t.Transfer)
			assert.EqualValues(tb, 1, t.Committed, t.Transfer)
			assert.Len(tb, t.Holders, 2, t.Transfer)
		}
	})
	timed("audit", func() {
		a, err := l.Audit(ctx, 100)
		require.NoError(tb, err)
		assert.Empty(tb, a.Unbalanced)
		assert.Empty(tb, a.AccountDrift)
		assert.True(tb, a.Advanced)
		audited = a.Entries
	})
	timed("parked_set_aside", func() {
		_, err := l.Gaps(ctx)
		require.NoError(tb, err)
		_, err = l.SetAside(ctx, 1000)
		require.NoError(tb, err)
	})
	return steps, audited
}

// TestReconcileScale_Small is BenchmarkReconcileScale's ledger at a small
// size, checking what reconcile's reads find there, not how long they take.
func TestReconcileScale_Small(t *testing.T) {
	needServers(t)
	l := openLedger(t)
	require.NoError(t, ledgertest.FillScale(context.Background(), l.Pool(), 300, 3000, 7))
	var entries int64
	require.NoError(t, l.Pool().QueryRow(context.Background(), "SELECT count(*) FROM ledger.entries").Scan(&entries))
	_, audited := reconcileReads(t, l, 300, 7)
	assert.Equal(t, entries, audited, "the first audit reads every entry")
	_, audited = reconcileReads(t, l, 300, 7)
	assert.Zero(t, audited, "the next one, only what is new: nothing")

	t.Run("a batch's snapshot reads its holders' accounts by the key, not every transfer's", func(t *testing.T) {
		ctx := context.Background()
		hs, err := l.Holders(ctx)
		require.NoError(t, err)
		// accounts had a row per transfer (its clearing account) beside
		// the holders' own before migration 7; by the key still.
		rows, err := l.Pool().Query(ctx, "EXPLAIN "+ledger.SnapshotAccountsQuery, hs[100:200])
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		plan := strings.Join(lines, "\n")
		t.Logf("plan:\n%s", plan)
		assert.Regexp(t, "(Index|Bitmap Index) Scan (using|on) accounts_pkey", plan)
		assert.NotContains(t, plan, "Seq Scan on accounts")
	})
}

// BenchmarkReconcileScale times reconcile's reads of a ledger of
// -scale.holders holders and -scale.transfers settled transfers (and 10
// open ones), and of the same holders with no transfers:
//
//	go test -run '^$' -bench ReconcileScale -benchtime 1x ./ledger/ -args -scale.holders=100000 -scale.transfers=1000000
func BenchmarkReconcileScale(b *testing.B) {
	needServers(b)
	for _, transfers := range []int{0, *scaleTransfers} {
		b.Run(fmt.Sprintf("holders=%d/transfers=%d", *scaleHolders, transfers), func(b *testing.B) {
			l, err := ledger.Open(context.Background(), pg.NewDatabase(b), nil)
			require.NoError(b, err)
			defer l.Close()
			open := min(10, transfers)
			start := time.Now()
			require.NoError(b, ledgertest.FillScale(context.Background(), l.Pool(), *scaleHolders, transfers, open))
			b.Logf("filled in %v", time.Since(start).Round(time.Millisecond))
			// The first audit reads the whole history (after an upgrade, or
			// on a new ledger); reconcile's runs after it read what is new.
			start = time.Now()
			a, err := l.Audit(context.Background(), 100)
			require.NoError(b, err)
			require.True(b, a.Advanced)
			firstAudit := time.Since(start)
			b.Logf("first audit: %d entries in %v", a.Entries, firstAudit.Round(time.Millisecond))
			b.ResetTimer()
			total := map[string]time.Duration{}
			for range b.N {
				steps, _ := reconcileReads(b, l, *scaleHolders, open)
				for _, s := range steps {
					total[s.name] += s.took
				}
			}
			for name, d := range total {
				b.ReportMetric(d.Seconds()/float64(b.N), name+"_s")
			}
			b.ReportMetric(firstAudit.Seconds(), "first_audit_s")
			for _, q := range []struct {
				name, sql string
				args      []any
			}{{"UnsettledTransfers", ledger.UnsettledQuery, []any{1000}}, {"Audit's entries", ledger.AuditFresh, nil}} {
				rows, err := l.Pool().Query(context.Background(), "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+q.sql, q.args...)
				require.NoError(b, err)
				plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(b, err)
				b.Logf("%s, plan:\n%s", q.name, strings.Join(plan, "\n"))
			}
		})
	}
}
