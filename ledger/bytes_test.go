package ledger_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// The sizes of BenchmarkLedgerBytes' workloads.
var (
	bytesInstructions = flag.Int("bytes.instructions", 20000, "BenchmarkLedgerBytes: random single-holder instructions over 500 holders")
	bytesPayments     = flag.Int("bytes.payments", 2000, "BenchmarkLedgerBytes: two-part payments over 500 holders")
)

// relationSizes reads the on-disk size of each table of the ledger (heap
// and TOAST) and of each index, after a VACUUM (as autovacuum keeps it: the
// space of deleted and updated rows reused, empty pages at the end given
// back): name -> bytes.
func relationSizes(tb testing.TB, l *ledger.Ledger) map[string]int64 {
	tb.Helper()
	_, err := l.Pool().Exec(context.Background(), "VACUUM")
	require.NoError(tb, err)
	rows, err := l.Pool().Query(context.Background(), `SELECT c.relname || CASE c.relkind WHEN 'i' THEN ' (index)' ELSE '' END,
			CASE c.relkind WHEN 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'ledger' AND c.relkind IN ('r', 'i')`)
	require.NoError(tb, err)
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		require.NoError(tb, rows.Scan(&name, &n))
		out[name] = n
	}
	require.NoError(tb, rows.Err())
	return out
}

// logGrowth logs, largest first, how many bytes each relation grew by per
// unit, and returns the total per unit.
func logGrowth(b *testing.B, what string, before, after map[string]int64, units int) float64 {
	var names []string
	var total int64
	for name, n := range after {
		if n-before[name] != 0 {
			names = append(names, name)
			total += n - before[name]
		}
	}
	slices.SortFunc(names, func(x, y string) int { return int((after[y] - before[y]) - (after[x] - before[x])) })
	var sb strings.Builder
	for _, name := range names {
		d := after[name] - before[name]
		fmt.Fprintf(&sb, "\n  %-40s %9.1f bytes (%4.1f%%)", name, float64(d)/float64(units), 100*float64(d)/float64(total))
	}
	b.Logf("%s: %.0f bytes each (%d of them), by relation:%s", what, float64(total)/float64(units), units, sb.String())
	return float64(total) / float64(units)
}

// rowStats are a table's rows and the sum of their stored widths
// (pg_column_size of the whole row: its header and columns as stored; a
// page adds a 4-byte pointer to each row, and the padding to 8 bytes).
type rowStats struct{ rows, width int64 }

// tableRows reads rowStats of the tables a payment writes.
func tableRows(tb testing.TB, l *ledger.Ledger) map[string]rowStats {
	tb.Helper()
	out := map[string]rowStats{}
	for _, t := range []string{"instructions", "entries", "accounts", "transfer_clearing", "holders"} {
		var r rowStats
		require.NoError(tb, l.Pool().QueryRow(context.Background(),
			"SELECT count(*), coalesce(sum(pg_column_size(t.*)), 0) FROM ledger."+t+" t").Scan(&r.rows, &r.width))
		out[t] = r
	}
	return out
}

// logRows logs, per unit, the rows each table gained and their mean
// stored width: where the bytes go, row by row. A report, not a check.
func logRows(b *testing.B, what string, before, after map[string]rowStats, units int) {
	var sb strings.Builder
	for _, t := range slices.Sorted(maps.Keys(after)) {
		d := rowStats{after[t].rows - before[t].rows, after[t].width - before[t].width}
		width := 0.0
		if d.rows > 0 {
			width = float64(d.width) / float64(d.rows)
		}
		fmt.Fprintf(&sb, "\n  %-40s %5.2f rows, %6.1f bytes each as stored", t, float64(d.rows)/float64(units), width)
	}
	b.Logf("%s: rows added, by table:%s", what, sb.String())
}

// BenchmarkLedgerBytes measures the ledger's size: per applied instruction
// of a random single-holder workload, and per two-part payment (a one-payer
// transfer: one instruction per part, the payer's debit and the payee's
// credit), from real events through the sink, in batches of 1000; for the
// payments it also logs the rows each table gained and their widths:
//
//	go test -run '^$' -bench LedgerBytes -benchtime 1x -v ./ledger/ [-bytes.payments N]
func BenchmarkLedgerBytes(b *testing.B) {
	needServers(b)
	ctx := context.Background()
	applyAll := func(l *ledger.Ledger, evs []map[string]string) {
		for lo := 0; lo < len(evs); lo += 1000 {
			_, err := l.Apply(ctx, stored.Entries(evs[lo:min(lo+1000, len(evs))]...))
			require.NoError(b, err)
		}
	}
	b.Run("instructions", func(b *testing.B) {
		_, evs := workload(b, rand.Uint64(), 500, *bytesInstructions)
		l := openLedger(b)
		before := relationSizes(b, l)
		applyAll(l, evs)
		b.ReportMetric(logGrowth(b, "an instruction", before, relationSizes(b, l), len(evs)), "bytes/instruction")
	})
	b.Run("payments", func(b *testing.B) {
		names, byHolder := payments(b, rand.Uint64(), 500, *bytesPayments)
		l := openLedger(b)
		var opens, parts []map[string]string
		for _, h := range names {
			opens = append(opens, byHolder[h][0])
			parts = append(parts, byHolder[h][1:]...)
		}
		applyAll(l, opens)
		before, rowsBefore := relationSizes(b, l), tableRows(b, l)
		applyAll(l, parts)
		b.ReportMetric(logGrowth(b, "a payment", before, relationSizes(b, l), *bytesPayments), "bytes/payment")
		logRows(b, "a payment", rowsBefore, tableRows(b, l), *bytesPayments)
		var open int64
		require.NoError(b, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.transfer_clearing").Scan(&open))
		require.Zero(b, open, "every payment settled: nothing open")
	})
}

// BenchmarkLedgerWAL measures the WAL PostgreSQL writes per two-part payment
// (as BenchmarkLedgerBytes' payments) applied in batches of 50 events, the
// holders' events taken in turn as a relay reads them, and logs it by WAL
// record type (pg_walinspect): rows, index entries, row locks, updates.
// The tests' server writes no full-page images (full_page_writes=off), which
// a deployment adds after each checkpoint:
//
//	go test -run '^$' -bench LedgerWAL -benchtime 1x -v ./ledger/ [-args -bytes.payments=N]
func BenchmarkLedgerWAL(b *testing.B) {
	needServers(b)
	ctx := context.Background()
	l := openLedger(b)
	names, byHolder := payments(b, rand.Uint64(), 500, *bytesPayments)
	// Each holder's opening first, then its parts in turn with the others'.
	var rounds [][]map[string]string
	for _, h := range names {
		for k, ev := range byHolder[h] {
			if k == len(rounds) {
				rounds = append(rounds, nil)
			}
			rounds[k] = append(rounds[k], ev)
		}
	}
	applyAll := func(evs []map[string]string) {
		for lo := 0; lo < len(evs); lo += 50 {
			_, err := l.Apply(ctx, stored.Entries(evs[lo:min(lo+50, len(evs))]...))
			require.NoError(b, err)
		}
	}
	applyAll(rounds[0])
	lsn := func() (at string) {
		require.NoError(b, l.Pool().QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&at))
		return at
	}
	from := lsn()
	for _, r := range rounds[1:] {
		applyAll(r)
	}
	to := lsn()
	// The server commits without waiting for the WAL's flush; a checkpoint
	// flushes it up to to, which pg_walinspect reads no further than.
	_, err := l.Pool().Exec(ctx, "CHECKPOINT; CREATE EXTENSION IF NOT EXISTS pg_walinspect")
	require.NoError(b, err)
	rows, err := l.Pool().Query(ctx, `SELECT "resource_manager/record_type", count, record_size + fpi_size
		FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY record_size + fpi_size DESC`, from, to)
	require.NoError(b, err)
	var sb strings.Builder
	var total float64
	per := float64(*bytesPayments)
	for rows.Next() {
		var kind string
		var n, size int64
		require.NoError(b, rows.Scan(&kind, &n, &size))
		total += float64(size)
		fmt.Fprintf(&sb, "\n  %-28s %6.2f records, %6.1f bytes", kind, float64(n)/per, float64(size)/per)
	}
	require.NoError(b, rows.Err())
	b.Logf("WAL per payment (%d of them), by record type:%s", *bytesPayments, sb.String())
	b.ReportMetric(total/per, "wal-bytes/payment")
}
