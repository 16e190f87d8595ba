package ledger_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

// TestLedgerAdversary_TwoEventsAtOneParkedSeqAreBothKept: two different events of one
// holder at the same seq, both arriving behind a gap (two histories of the
// holder, as after a failover that forked it, or one written straight into an
// outbox):
//
//  1. Apply(seq 1, A3): A3 parked.
//  2. Apply(B3): B3 (another event at seq 3, chained on the same seq 2)
//     meets A3 parked at its seq; the write commits, and the relay removes
//     B3 from its outbox.
//  3. Apply(seq 2): seq 2 applied, then A3.
//
// B3 is kept in ledger.refused, as a conflict at or below the head is: the
// evidence docs/ledger.md tells an operator to merge forked histories from.
// Before, B3 was in no table: an event lost by the ledger after the relay
// was told it was durable.
func TestLedgerAdversary_TwoEventsAtOneParkedSeqAreBothKept(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "p4-park-two-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	open, second := h.open(), h.credit("c2", 5)
	fork := *h
	a3 := h.credit("a3", 1)
	b3 := fork.credit("b3", 7)
	require.NotEqual(t, a3[stored.EventDigest], b3[stored.EventDigest])

	_, err := l.Apply(ctx, stored.Entries(open, a3))
	require.NoError(t, err)
	rep, err := l.Apply(ctx, stored.Entries(b3))
	require.NoError(t, err)
	t.Logf("B3's write: %+v", rep)
	_, err = l.Apply(ctx, stored.Entries(second))
	require.NoError(t, err)

	var found int64
	require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) FROM (
			SELECT encode(digest, 'hex') AS d FROM ledger.instructions WHERE holder = $1
			UNION ALL SELECT fields->>'digest' FROM ledger.parked WHERE holder = $1
			UNION ALL SELECT fields->>'digest' FROM ledger.refused WHERE holder = $1
			UNION ALL SELECT convert_from(fields, 'UTF8')::jsonb->>'digest' FROM ledger.set_aside WHERE holder = $1) AS x
		WHERE d = $2`, h.holder, b3[stored.EventDigest]).Scan(&found))
	assert.NotZero(t, found, "B3 was acknowledged to the relay (removed from its outbox) and is in no table of the ledger")
}

// The event PostgreSQL refuses (a credit of 2^53 units, written straight
// into an outbox) arrives behind a gap, so it is parked unchecked; its
// holder's missing event arrives alone, in a later batch:
//
//  1. Apply(seq 1, seq 3): seq 1 applied, seq 3 parked.
//  2. Apply(seq 2): seq 2 with the parked seq 3 behind it is refused (the
//     accounts' range trigger); seq 2 alone applies, and seq 3, tried
//     alone, is the one set aside, leaving ledger.parked.
//
// Before, seq 2 was set aside ("PostgreSQL refused it"), the head left at
// seq 1, seq 3 still parked, and the repair of seq 2's row, which applies
// it with the parked seq 3 behind it, refused for good.
func TestLedgerAdversary_ARefusedEventParkedBehindAGapIsTheOneSetAside(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "park-ovf-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	open, second, third := h.open(), h.credit("c2", 5), h.credit("c3", 1<<53)

	rep, err := l.Apply(ctx, stored.Entries(open, third))
	require.NoError(t, err)
	require.Equal(t, 1, rep.Applied)
	require.Equal(t, 1, rep.Parked, "seq 3 waits behind the gap at seq 2")

	_, err = l.Apply(ctx, stored.Entries(second))
	require.NoError(t, err)

	snaps, err := l.Snapshots(ctx, []string{h.holder}, 0)
	require.NoError(t, err)
	require.NotNil(t, snaps[h.holder])
	assert.Equal(t, int64(2), snaps[h.holder].Seq, "seq 2 is sound and its predecessor is in: it applies")
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	var mine []int64
	for _, s := range set {
		if s.Holder == h.holder {
			mine = append(mine, s.Seq)
		}
	}
	assert.Equal(t, []int64{3}, mine, "the event set aside is the one PostgreSQL refuses")
	var parked int64
	require.NoError(t, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.parked WHERE holder = $1", h.holder).Scan(&parked))
	assert.Zero(t, parked, "the refused event left ledger.parked for ledger.set_aside")
}
