package ledger_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// asVersion6 puts a ledger back as the sink wrote it before migration 7,
// and forgets that migration: every field of an instruction stored
// verbatim (fp and digest as hexadecimal text), every entry naming its account, entries keyed (holder, seq, n),
// a transfer's clearing account kept in ledger.accounts beside its sum in
// ledger.transfer_clearing, zero once settled.
func asVersion6(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, pgx.BeginFunc(ctx, l.Pool(), func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SET LOCAL atomledger.writer = 'sink';
			CREATE TEMP TABLE verbatim ON COMMIT DROP AS SELECT holder, seq, id, counterparty, memo, ops, state FROM ledger.events;
			UPDATE ledger.instructions i SET id = v.id, counterparty = v.counterparty, memo = v.memo, ops = v.ops, state = v.state
				FROM verbatim v WHERE i.holder = v.holder AND i.seq = v.seq;
			DROP VIEW ledger.events;
			DROP VIEW ledger.account_amounts;
			DROP FUNCTION ledger.event_ops(text);
			DROP FUNCTION ledger.event_state(bigint, text);
			ALTER TABLE ledger.instructions ALTER COLUMN fp TYPE text USING encode(fp, 'hex'),
				ALTER COLUMN digest TYPE text USING encode(digest, 'hex');
			DROP INDEX ledger.instructions_id;
			CREATE INDEX instructions_id ON ledger.instructions (holder, id);
			UPDATE ledger.entries SET account = holder WHERE account IS NULL;
			ALTER TABLE ledger.entries ALTER COLUMN n TYPE int, ALTER COLUMN op_index TYPE int, ALTER COLUMN account SET NOT NULL;
			DROP INDEX ledger.entries_instruction;
			ALTER TABLE ledger.entries ADD PRIMARY KEY (holder, seq, n);
			INSERT INTO ledger.accounts (holder, kind, asset, amount)
				SELECT account, 'cp', asset, sum(amount) FROM ledger.entries
				WHERE account_kind = 'cp' AND account LIKE 'x:%' GROUP BY account, asset;
			DELETE FROM ledger.schema_migrations WHERE version = 7`)
		return err
	}))
}

// ledgerView is what the ledger tells of its holders: their states with
// their recent instructions, their statements, the open transfers, and its
// audit of the books.
type ledgerView struct {
	Snapshots  map[string]*stored.Snapshot
	Statements map[string]ledger.Statement
	Unsettled  []ledger.TransferBalance
	Drift      []ledger.AccountDrift
	Unbalanced []ledger.Imbalance
}

func viewOf(t *testing.T, l *ledger.Ledger, holders []string) ledgerView {
	t.Helper()
	ctx := context.Background()
	v := ledgerView{Statements: map[string]ledger.Statement{}}
	var err error
	v.Snapshots, err = l.Snapshots(ctx, holders, 1)
	require.NoError(t, err)
	for _, h := range holders {
		v.Statements[h], err = l.Statement(ctx, h, 0, ledger.MaxStatementLimit)
		require.NoError(t, err)
	}
	v.Unsettled, err = l.UnsettledTransfers(ctx, 1000)
	require.NoError(t, err)
	v.Drift, err = l.AccountDrifts(ctx, 10)
	require.NoError(t, err)
	v.Unbalanced, err = l.Unbalanced(ctx, 10)
	require.NoError(t, err)
	return v
}

// requireEventsVerbatim checks that ledger.events gives back every event
// of holders field for field, so that each row's digest checks again.
func requireEventsVerbatim(t *testing.T, l *ledger.Ledger, evs map[string][]map[string]string) {
	t.Helper()
	for h, fs := range evs {
		rows, err := l.Pool().Query(context.Background(), `SELECT seq, id, fp, ts_ms, counterparty, ops, state, digest, memo,
				coalesce(transfer, ''), dv FROM ledger.events WHERE holder = $1 ORDER BY seq`, h)
		require.NoError(t, err)
		var got []map[string]string
		prev := ""
		for rows.Next() {
			ev := stored.Event{Holder: h}
			require.NoError(t, rows.Scan(&ev.Seq, &ev.ID, &ev.FP, &ev.TS, &ev.CP, &ev.Ops, &ev.State, &ev.Digest, &ev.Memo, &ev.Xfer, &ev.DV))
			assert.Equal(t, ev.Digest, stored.Digest(prev, ev), "holder %s seq %d: the digest checks again", h, ev.Seq)
			prev = ev.Digest
			got = append(got, ev.Fields())
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, fs, got, "holder %s", h)
	}
}

// TestMigrate_CompactsInPlace writes payments (some with a part still
// missing) and single-holder instructions, puts the ledger back as it was
// before migration 7, migrates it, and finds everything the ledger tells
// the same, every event given back verbatim, the clearing accounts of
// settled transfers gone, and the sink carrying on.
func TestMigrate_CompactsInPlace(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	names, evs := payments(t, seed, 4, 20)
	single, singleEvs := workload(t, seed, 5, 100)
	l := openLedger(t)
	_, err := l.Apply(ctx, stored.Entries(singleEvs...))
	require.NoError(t, err)
	for _, h := range names[1:] {
		_, err := l.Apply(ctx, stored.Entries(evs[h]...))
		require.NoError(t, err)
	}
	all := append(append([]string(nil), names[1:]...), single...)
	want := viewOf(t, l, all)
	require.NotEmpty(t, want.Unsettled, "the first holder's parts are missing")

	asVersion6(t, l)
	var clearingRows, wide int64
	require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) FROM ledger.accounts WHERE holder LIKE 'x:%'`).Scan(&clearingRows))
	require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) FROM ledger.instructions WHERE counterparty LIKE 'x:%'`).Scan(&wide))
	require.Positive(t, clearingRows, "version 6 keeps every clearing account")
	require.Positive(t, wide)

	v, err := ledger.Migrate(ctx, l.Pool())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, want, viewOf(t, l, all), "the ledger tells the same")
	byHolder := map[string][]map[string]string{}
	for _, h := range names[1:] {
		byHolder[h] = evs[h]
	}
	for _, f := range singleEvs {
		byHolder[f["holder"]] = append(byHolder[f["holder"]], f)
	}
	requireEventsVerbatim(t, l, byHolder)
	var full string
	require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) || ' ' || count(*) FILTER (WHERE counterparty = ''
			AND left(ops, 1) = '*' AND left(state, 1) = '~' AND length(fp) = 16 AND length(digest) = 20)
		FROM ledger.instructions WHERE transfer IS NOT NULL`).Scan(&full))
	n := 0
	for _, h := range names[1:] {
		n += len(evs[h]) - 1
	}
	assert.Equal(t, strconv.Itoa(n)+" "+strconv.Itoa(n), full, "every part stored compact")
	a, err := l.Audit(ctx, 10)
	require.NoError(t, err)
	assert.True(t, a.Advanced, "the audit of the whole history is clean: %+v", a)

	// The sink carries on: the missing parts settle every transfer, whose
	// clearing accounts then hold no row anywhere.
	_, err = l.Apply(ctx, stored.Entries(evs[names[0]]...))
	require.NoError(t, err)
	byHolder[names[0]] = evs[names[0]]
	requireEventsVerbatim(t, l, byHolder)
	got := viewOf(t, l, append(all, names[0]))
	assert.Empty(t, got.Unsettled)
	assert.Empty(t, got.Drift)
	assert.Empty(t, got.Unbalanced)
	require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) FROM ledger.accounts WHERE holder LIKE 'x:%'`).Scan(&clearingRows))
	assert.Zero(t, clearingRows)
	requireSameAsRedis(t, l, append(all, names[0]))
}
