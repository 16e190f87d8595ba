package ledger_test

// Probes of the ledger with the events that are hardest for it: where what
// it gives back could differ from what Redis applied, or one event could
// hold back everyone.

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// TestLedgerAdversary_RepairAppliesTransferParts: a payee's event set aside
// (here by a constraint since dropped) is a payment's part, and the parts
// parked behind it too. Repair applies them all, their clearing sums
// included: every transfer settles, the books audit clean, the state is
// Redis's. (Repair once gathered them without the clearing sums' map and
// panicked on the first transfer part.)
func TestLedgerAdversary_RepairAppliesTransferParts(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	names, evs := payments(t, seed, 2, 4)
	x := names[0]
	require.GreaterOrEqual(t, len(evs[x]), 4, "open and a part per payment")
	l := openLedger(t)
	_, err := l.Pool().Exec(ctx, "ALTER TABLE ledger.instructions ADD CONSTRAINT not_x2 CHECK (holder <> '"+x+"' OR seq <> 2)")
	require.NoError(t, err)
	var all []map[string]string
	for _, h := range names {
		all = append(all, evs[h]...)
	}
	rep, err := l.Apply(ctx, stored.Entries(all...))
	require.NoError(t, err)
	require.Equal(t, 1, rep.SetAside)
	require.Equal(t, len(evs[x])-2, rep.Parked)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, 1)
	require.Equal(t, x, set[0].Holder)
	_, err = l.Pool().Exec(ctx, "ALTER TABLE ledger.instructions DROP CONSTRAINT not_x2")
	require.NoError(t, err)

	rep, err = l.Repair(ctx, set[0].ID, nil, "")
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Applied: len(evs[x]) - 1, Unparked: len(evs[x]) - 2}, rep)
	unsettled, err := l.UnsettledTransfers(ctx, 100)
	require.NoError(t, err)
	assert.Empty(t, unsettled, "every payment has both parts in: its clearing account is zero")
	requireEventsVerbatim(t, l, evs)
	requireSameAsRedis(t, l, names)
	a, err := l.Audit(ctx, 10)
	require.NoError(t, err)
	assert.True(t, a.Advanced, "%+v", a)
}

// TestLedgerAdversary_UnreadableParkedEventIsSetAside: an event parked by an
// older sink that this one cannot read (a hold in its state that is not a
// stored hold: older sinks took it) is set aside when its holder's batch
// loads it, instead of failing every write of that holder and of every
// holder written with it.
func TestLedgerAdversary_UnreadableParkedEventIsSetAside(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	a, b := &history{holder: "pk-a-" + tag}, &history{holder: "pk-b-" + tag}
	batch := []map[string]string{a.open(), a.credit("a2", 5), b.open(), b.credit("b2", 7)}
	bad := stored.Event{Holder: a.holder, Seq: 3, ID: "a3", FP: "ab", TS: 1796000000003, CP: "bank",
		Ops:   `[{"op":"freeze","asset":"CNY","units":"5","hold":"o-1","mv":[["CNY","avail","frozen","5"]]}]`,
		State: `{"s":"3","st":"active","b":{"CNY":["0","5"]},"h":{"o-1":"soon|CNY=5|"}}`}
	bad.Digest = stored.Digest(a.digest, bad)
	a.seq, a.digest = 3, bad.Digest
	_, err := l.Pool().Exec(ctx, "INSERT INTO ledger.parked (holder, seq, fields) VALUES ($1, 3, $2)", a.holder, bad.Fields())
	require.NoError(t, err)

	rep, err := l.Apply(ctx, stored.Entries(batch...))
	require.NoError(t, err, "one unreadable parked event fails no write")
	assert.Equal(t, ledger.Report{Applied: 4, SetAside: 1}, rep)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, 1)
	assert.Equal(t, a.holder, set[0].Holder)
	assert.Equal(t, int64(3), set[0].Seq)
	assert.Contains(t, set[0].Reason, `state of hold "o-1"`)
	var parked int64
	require.NoError(t, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.parked").Scan(&parked))
	assert.Zero(t, parked, "out of parked, into set_aside")
	snaps, err := l.Snapshots(ctx, []string{a.holder, b.holder}, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(2), snaps[a.holder].Seq)
	assert.Equal(t, int64(2), snaps[b.holder].Seq)

	// Its holder's next event waits behind it, as behind any event set aside.
	rep, err = l.Apply(ctx, stored.Entries(a.credit("a4", 1)))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Parked: 1}, rep)
}
