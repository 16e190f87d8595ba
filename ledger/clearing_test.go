package ledger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// openClearing reads ledger.transfer_clearing: transfer -> asset -> sum.
func openClearing(t *testing.T, l *ledger.Ledger) map[string]map[string]string {
	t.Helper()
	return clearingOf(t, l, "SELECT transfer, asset, clearing::text FROM ledger.transfer_clearing")
}

// viewClearing reads the non-zero sums of the view ledger.transfer_balances,
// which computes them from every entry.
func viewClearing(t *testing.T, l *ledger.Ledger) map[string]map[string]string {
	t.Helper()
	return clearingOf(t, l, "SELECT transfer, asset, clearing::text FROM ledger.transfer_balances WHERE clearing <> 0")
}

func clearingOf(t *testing.T, l *ledger.Ledger, sql string) map[string]map[string]string {
	t.Helper()
	rows, err := l.Pool().Query(context.Background(), sql)
	require.NoError(t, err)
	out := map[string]map[string]string{}
	for rows.Next() {
		var tr, asset, sum string
		require.NoError(t, rows.Scan(&tr, &asset, &sum))
		if out[tr] == nil {
			out[tr] = map[string]string{}
		}
		out[tr][asset] = sum
	}
	require.NoError(t, rows.Err())
	return out
}

// payments opens holders (each with 1000.00 CNY) and commits n two-part
// payments between random pairs of them, and returns each holder's events.
func payments(t testing.TB, seed uint64, holders, n int) (names []string, byHolder map[string][]map[string]string) {
	t.Helper()
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(seed, 2))
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	var opens []instructions.Instruction
	for i := range holders {
		names = append(names, fmt.Sprintf("cc-%s-%d", tag, i))
		opens = append(opens, instructions.New("o", names[i]).Open().Credit("CNY", "1000.00"))
	}
	require.Equal(t, holders, apply(t, opens))
	for i := range n {
		p := rnd.IntN(holders)
		q := (p + 1 + rnd.IntN(holders-1)) % holders
		amt := strconv.Itoa(1+rnd.IntN(9)) + ".00"
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: fmt.Sprintf("cc-%s-%d", tag, i), Parts: []instructions.Part{
			{Holder: names[p], Ops: instructions.Instruction{}.Debit("CNY", amt).Ops},
			{Holder: names[q], Ops: instructions.Instruction{}.Credit("CNY", amt).Ops}}})
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st)
	}
	byHolder = map[string][]map[string]string{}
	for _, f := range outboxEvents(t, names) {
		byHolder[f["holder"]] = append(byHolder[f["holder"]], f)
	}
	return names, byHolder
}

// TestSink_ConcurrentBatchesKeepClearingExact applies each holder's events
// in its own batch, all at once: every batch touches the clearing sums (and
// the clearing accounts) of transfers whose other parts the others apply.
// None may deadlock or lose an update: the sums end as the view computes
// them from the entries, and at zero once every part is in.
func TestSink_ConcurrentBatchesKeepClearingExact(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	names, evs := payments(t, seed, 8, 150)
	l := openLedger(t)

	applyAll := func(batches [][]map[string]string) {
		var wg sync.WaitGroup
		errs := make([]error, len(batches))
		for i, b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = l.Apply(ctx, stored.Entries(b...))
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err, "no deadlock, no lost update")
		}
	}

	// All but the last holder's last four events (its last two steps), in
	// one batch per holder, at once.
	last := names[len(names)-1]
	held := evs[last][len(evs[last])-4:]
	var batches [][]map[string]string
	for _, h := range names {
		b := evs[h]
		if h == last {
			b = b[:len(b)-4]
		}
		batches = append(batches, b)
	}
	applyAll(batches)
	open := openClearing(t, l)
	assert.Equal(t, viewClearing(t, l), open, "the sums are the view's")
	assert.NotEmpty(t, open, "the held-back commits leave transfers open")
	unsettled, err := l.UnsettledTransfers(ctx, 1000)
	require.NoError(t, err)
	assert.Len(t, unsettled, len(open))

	applyAll([][]map[string]string{held})
	assert.Empty(t, openClearing(t, l), "every part in: nothing open")
	assert.Empty(t, viewClearing(t, l))
	unsettled, err = l.UnsettledTransfers(ctx, 1000)
	require.NoError(t, err)
	assert.Empty(t, unsettled)
	requireSameAsRedis(t, l, names)
}

// TestUnsettledTransfers_ReadsNoEntry holds ledger.entries locked while
// UnsettledTransfers runs under a lock timeout: reading any entry (the
// history) would fail it.
func TestUnsettledTransfers_ReadsNoEntry(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	buyer, _, ids, evs := tradeEvents(t)
	dsn := pg.NewDatabase(t)
	l, err := ledger.Open(ctx, dsn, nil)
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Apply(ctx, stored.Entries(evs[buyer]...))
	require.NoError(t, err)

	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["lock_timeout"] = "200ms"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	impatient, err := ledger.New(ctx, pool, nil)
	require.NoError(t, err)

	tx, err := l.Pool().Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // only a lock
	_, err = tx.Exec(ctx, "LOCK TABLE ledger.entries IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	open, err := impatient.UnsettledTransfers(ctx, 10)
	require.NoError(t, err, "reads no entry")
	require.Len(t, open, 2, "the buyer's parts of both transfers are in, the seller's not")
	assert.Equal(t, ids[1], open[0].Transfer)
	assert.Equal(t, ids[0], open[1].Transfer)
	assert.Equal(t, map[string]string{"USDT": "100000000", "BTC": "-200000"}, open[1].Clearing)
}

// TestMigrate_BackfillsTransferClearing writes a ledger as it was before
// ledger.transfer_clearing (the table gone, its migration and the later
// one not recorded), migrates it, and finds the same open transfers.
func TestMigrate_BackfillsTransferClearing(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	names, evs := payments(t, seed, 4, 20)
	l := openLedger(t)
	for _, h := range names[1:] {
		_, err := l.Apply(ctx, stored.Entries(evs[h]...))
		require.NoError(t, err)
	}
	want, err := l.UnsettledTransfers(ctx, 1000)
	require.NoError(t, err)
	require.NotEmpty(t, want, "the first holder's parts are missing")
	wantSums := openClearing(t, l)

	asVersion6(t, l)
	_, err = l.Pool().Exec(ctx, `DROP TABLE ledger.transfer_clearing;
		DELETE FROM ledger.schema_migrations WHERE version = 5`)
	require.NoError(t, err)
	v, err := ledger.Migrate(ctx, l.Pool())
	require.NoError(t, err)
	assert.Equal(t, schemaVersion, v)
	assert.Equal(t, wantSums, openClearing(t, l))
	assert.Equal(t, viewClearing(t, l), openClearing(t, l))
	got, err := l.UnsettledTransfers(ctx, 1000)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// Then the sink carries on from the backfilled sums.
	_, err = l.Apply(ctx, stored.Entries(evs[names[0]]...))
	require.NoError(t, err)
	assert.Empty(t, openClearing(t, l))
	got, err = l.UnsettledTransfers(ctx, 1000)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestAudit_ReadsWhatIsNewAndKeepsWhatIsWrong: the first audit reads every
// entry, the next ones only the entries the sink wrote since; an entry
// changed by hand, below the marks, makes the next audit read everything
// again, which finds it, and finds it again until it is mended.
func TestAudit_ReadsWhatIsNewAndKeepsWhatIsWrong(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	holders, evs := workload(t, seed, 20, 300)
	l := openLedger(t)
	count := func() int64 {
		var n int64
		require.NoError(t, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.entries").Scan(&n))
		return n
	}
	audit := func() ledger.Audit {
		a, err := l.Audit(ctx, 10)
		require.NoError(t, err)
		return a
	}
	clean := func(entries int64, whole bool) ledger.Audit {
		return ledger.Audit{Unbalanced: []ledger.Imbalance{}, AccountDrift: []ledger.AccountDrift{}, Entries: entries, Whole: whole, Advanced: true}
	}
	half := len(evs) / 2
	_, err := l.Apply(ctx, stored.Entries(evs[:half]...))
	require.NoError(t, err)
	first := count()
	assert.Equal(t, clean(first, true), audit(), "the first audit reads every entry")
	_, err = l.Apply(ctx, stored.Entries(evs[half:]...))
	require.NoError(t, err)
	assert.Equal(t, clean(count()-first, false), audit(), "the next, only what the sink wrote since")
	assert.Equal(t, clean(0, false), audit(), "then nothing")

	// An entry of the first half, changed by hand: its instruction no
	// longer sums to zero, its account is no longer the sum of its entries.
	var h string
	var seq int64
	require.NoError(t, l.Pool().QueryRow(ctx, `UPDATE ledger.entries SET amount = amount + 1
		WHERE (holder, seq, n) = (SELECT holder, seq, n FROM ledger.entries WHERE n = 0 ORDER BY holder, seq LIMIT 1)
		RETURNING holder, seq`).Scan(&h, &seq))
	for range 2 {
		a := audit()
		assert.True(t, a.Whole, "a write outside the sink: the whole history")
		assert.Equal(t, count(), a.Entries)
		require.Len(t, a.Unbalanced, 1)
		assert.Equal(t, ledger.Imbalance{Holder: h, Seq: seq, Asset: a.Unbalanced[0].Asset, Sum: "1"}, a.Unbalanced[0])
		assert.Len(t, a.AccountDrift, 1)
		assert.False(t, a.Advanced, "the marks stay while something is wrong")
	}

	_, err = l.Pool().Exec(ctx, `UPDATE ledger.entries SET amount = amount - 1 WHERE holder = $1 AND seq = $2 AND n = 0`, h, seq)
	require.NoError(t, err)
	assert.Equal(t, clean(count(), true), audit(), "mended")
	assert.Equal(t, clean(0, false), audit())
	requireSameAsRedis(t, l, holders)
}
