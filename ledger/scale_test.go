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
)

// The size of BenchmarkReconcileScale's ledger.
var (
	scaleHolders   = flag.Int("scale.holders", 100000, "BenchmarkReconcileScale: holders")
	scaleTransfers = flag.Int("scale.transfers", 1000000, "BenchmarkReconcileScale: settled transfers (a multiple of the holders)")
)

// fillScale writes, straight into the ledger's tables, what the sink writes
// for holders holders (each opened with a credit of 1000.00 CNY) and
// transfers payments between them, of which the last open ones lack their
// payee's commit (their clearing account holds what the payer gave).
// Transfer j: payer j mod holders, payee the next holder, 1.00 CNY, in four
// instructions as the two-phase protocol writes them (the payer's prepare
// freezes under the hold x:<id> and its commit settles it into the clearing
// account; the payee's prepare moves nothing, its commit credits from it):
// six entries. transfers must be a multiple of holders, open at most
// holders.
func fillScale(tb testing.TB, l *ledger.Ledger, holders, transfers, open int) {
	tb.Helper()
	require.Zero(tb, transfers%holders, "transfers: a multiple of holders")
	require.LessOrEqual(tb, open, min(holders, transfers))
	ctx := context.Background()
	const credit, amount = 100000, 100
	rounds := transfers / holders
	// The payees of the open transfers lack their last instruction.
	openPayee := fmt.Sprintf("((h + %[1]d - 1) %% %[1]d >= %[1]d - %[2]d AND %[3]d > 0)", holders, open, rounds)
	stmts := []string{
		// Each holder: seq 1 opens and credits.
		fmt.Sprintf(`INSERT INTO ledger.instructions (holder, seq, id, fp, ts_ms, counterparty, memo, ops, state, digest, transfer, dv)
		SELECT 'h' || lpad(h::text, 7, '0'), 1, 'open-' || h, md5('fp' || h), 1700000000000 + h, 'external', '',
			'[{"op":"open"},{"op":"credit","asset":"CNY","units":"%[2]d","mv":[["CNY","cp","avail","%[2]d"]]}]',
			'{"s":"1","st":"active","b":{"CNY":["%[2]d","0"]},"c":{},"h":{},"p":["0","0"]}',
			md5('d' || h) || 'abcdefgh', NULL, 2
		FROM generate_series(0, %[1]d - 1) AS h`, holders, credit),
		fmt.Sprintf(`INSERT INTO ledger.entries (holder, seq, n, op_index, account, account_kind, asset, amount)
		SELECT 'h' || lpad(h::text, 7, '0'), 1, n, 1, CASE n WHEN 0 THEN 'external' ELSE 'h' || lpad(h::text, 7, '0') END,
			CASE n WHEN 0 THEN 'cp' ELSE 'avail' END, 'CNY', CASE n WHEN 0 THEN -%[2]d ELSE %[2]d END
		FROM generate_series(0, %[1]d - 1) AS h, generate_series(0, 1) AS n`, holders, credit),
		// Transfer j in round r = j / holders: the payer's prepare and
		// commit at seq 2+4r and 3+4r, the payee's at 4+4r and 5+4r.
		fmt.Sprintf(`INSERT INTO ledger.instructions (holder, seq, id, fp, ts_ms, counterparty, memo, ops, state, digest, transfer, dv)
		SELECT 'h' || lpad(p.h::text, 7, '0'), p.seq, 'x:pay-' || j || p.step, md5('fp' || j || p.step), 1700000000000 + %[1]d + j,
			'x:pay-' || j, '', p.ops, '{"s":"' || p.seq || '","b":{"CNY":["%[3]d","0"]},"h":{}}',
			md5('d' || j || p.step) || 'abcdefgh', 'pay-' || j, 2
		FROM generate_series(0, %[2]d - 1) AS j, LATERAL (VALUES
			(j %% %[1]d, 2 + 4 * (j / %[1]d), ':p', '[{"op":"check","hold":"x:pay-' || j || '"},{"op":"freeze","asset":"CNY","units":"%[4]d","hold":"x:pay-' || j || '","mv":[["CNY","avail","frozen","%[4]d"]]}]'),
			(j %% %[1]d, 3 + 4 * (j / %[1]d), ':c', '[{"op":"settle","hold":"x:pay-' || j || '","mv":[["CNY","frozen","cp","%[4]d"]]}]'),
			((j + 1) %% %[1]d, 4 + 4 * (j / %[1]d), ':p', '[{"op":"check","hold":"x:pay-' || j || '","asset":"CNY","units":"%[4]d"}]'),
			((j + 1) %% %[1]d, 5 + 4 * (j / %[1]d), ':c', '[{"op":"credit","asset":"CNY","units":"%[4]d","mv":[["CNY","cp","avail","%[4]d"]]}]')
		) AS p(h, seq, step, ops)
		WHERE NOT (j >= %[2]d - %[5]d AND p.seq = 5 + 4 * (j / %[1]d))`, holders, transfers, credit, amount, open),
		fmt.Sprintf(`INSERT INTO ledger.entries (holder, seq, n, op_index, account, account_kind, asset, amount)
		SELECT 'h' || lpad(e.h::text, 7, '0'), e.seq, e.n, e.op, CASE e.kind WHEN 'cp' THEN 'x:pay-' || j ELSE 'h' || lpad(e.h::text, 7, '0') END,
			e.kind, 'CNY', e.amount
		FROM generate_series(0, %[2]d - 1) AS j, LATERAL (VALUES
			(j %% %[1]d, 2 + 4 * (j / %[1]d), 0, 1, 'avail', -%[3]d), (j %% %[1]d, 2 + 4 * (j / %[1]d), 1, 1, 'frozen', %[3]d),
			(j %% %[1]d, 3 + 4 * (j / %[1]d), 0, 0, 'frozen', -%[3]d), (j %% %[1]d, 3 + 4 * (j / %[1]d), 1, 0, 'cp', %[3]d),
			((j + 1) %% %[1]d, 5 + 4 * (j / %[1]d), 0, 0, 'cp', -%[3]d), ((j + 1) %% %[1]d, 5 + 4 * (j / %[1]d), 1, 0, 'avail', %[3]d)
		) AS e(h, seq, n, op, kind, amount)
		WHERE NOT (j >= %[2]d - %[4]d AND e.seq = 5 + 4 * (j / %[1]d))`, holders, transfers, amount, open),
		fmt.Sprintf(`INSERT INTO ledger.holders (holder, seq, digest, status, created_ms, updated_ms)
		SELECT 'h' || lpad(h::text, 7, '0'), 1 + 4 * %[2]d - CASE WHEN %[3]s THEN 1 ELSE 0 END, md5('head' || h) || 'abcdefgh', 'active',
			1700000000000 + h, 1700000000000 + h
		FROM generate_series(0, %[1]d - 1) AS h`, holders, rounds, openPayee),
		fmt.Sprintf(`INSERT INTO ledger.accounts (holder, kind, asset, amount)
		SELECT 'h' || lpad(h::text, 7, '0'), k.kind, 'CNY', CASE WHEN k.kind = 'frozen' THEN 0 WHEN %[4]s THEN %[2]d - %[3]d ELSE %[2]d END
		FROM generate_series(0, %[1]d - 1) AS h, (VALUES ('avail'), ('frozen')) AS k(kind)
		WHERE k.kind = 'avail' OR %[5]d > 0`, holders, credit, amount, openPayee, rounds),
		fmt.Sprintf(`INSERT INTO ledger.accounts (holder, kind, asset, amount) VALUES ('external', 'cp', 'CNY', -%d::numeric * %d)`, credit, holders),
		fmt.Sprintf(`INSERT INTO ledger.accounts (holder, kind, asset, amount)
		SELECT 'x:pay-' || j, 'cp', 'CNY', CASE WHEN j >= %[1]d - %[2]d THEN %[3]d ELSE 0 END FROM generate_series(0, %[1]d - 1) AS j`, transfers, open, amount),
	}
	if transferClearing(tb, l) {
		// What the sink keeps of the open transfers; the settled ones left it.
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO ledger.transfer_clearing (transfer, asset, clearing)
			SELECT 'pay-' || j, 'CNY', %[3]d FROM generate_series(%[1]d - %[2]d, %[1]d - 1) AS j`, transfers, open, amount))
	}
	for _, s := range stmts {
		_, err := l.Pool().Exec(ctx, s)
		require.NoError(tb, err, s)
	}
	_, err := l.Pool().Exec(ctx, "VACUUM ANALYZE")
	require.NoError(tb, err)
}

// transferClearing tells whether the schema has ledger.transfer_clearing.
func transferClearing(tb testing.TB, l *ledger.Ledger) bool {
	var ok bool
	require.NoError(tb, l.Pool().QueryRow(context.Background(), "SELECT to_regclass('ledger.transfer_clearing') IS NOT NULL").Scan(&ok))
	return ok
}

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
	fillScale(t, l, 300, 3000, 7)
	var entries int64
	require.NoError(t, l.Pool().QueryRow(context.Background(), "SELECT count(*) FROM ledger.entries").Scan(&entries))
	_, audited := reconcileReads(t, l, 300, 7)
	assert.Equal(t, entries, audited, "the first audit reads every entry")
	_, audited = reconcileReads(t, l, 300, 7)
	assert.Zero(t, audited, "the next one, only what is new: nothing")
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
			fillScale(b, l, *scaleHolders, transfers, open)
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
