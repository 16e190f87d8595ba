package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// TestRepairAdversary_AForkedEventIsNotAppliedWithANoteAlone: a failover
// lost two debits (x, x2) that the ledger already had; Redis, back at seq 1,
// took y, y2 and y3 at seqs 2, 3 and 4. The ledger refuses y and y2
// (conflicts at seqs it holds) and sets y3 aside: it is the next seq, but its
// digest chains on Redis's y2, not on the ledger's x2. The event is unchanged
// (no --fields); an operator runs "engined repair --set-aside ID --note ...".
//
// Before (the defect this test caught): repair applies y3 on top of x and x2 (exit 0): the ledger now
// holds a history that is neither the ledger's (x, x2) nor Redis's (y, y2,
// y3), its head digest is Redis's y3's while its figures are those of another
// history, and its chain no longer proves anything.
//
// The contract: docs/ledger.md, Events set aside: when "The digest does
// not chain: the holder's histories forked, and there is nothing to mend in
// the event: choose one history (engined rebuild --holder H --force takes the
// ledger's), then mark the row resolved by hand". A note is for "a changed
// event" ("The event is then applied although its digest no longer matches
// its fields, so a changed event needs --note"); engined repair's usage puts
// --note with --fields. Repair must refuse an event whose fields as read do
// not chain on the ledger's head, note or not, and change nothing.
//
// The fix was in: ledger.Repair checks stored.Digest(head, ev) against ev.Digest and
// lets any note override a mismatch, without telling a changed event (whose
// original fields chain) from a forked one (whose original fields do not).
func TestRepairAdversary_AForkedEventIsNotAppliedWithANoteAlone(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	r := newLedgerRig(t)
	r.startRelay(t, nil)
	h := newID("fork")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00"))
	require.NoError(t, err)
	snaps, err := r.eng.Snapshots(ctx, []string{h})
	require.NoError(t, err)
	beforeX := snaps[h]
	for _, id := range []string{"x", "x2"} {
		_, err = r.eng.Apply(ctx, instructions.New(id, h).Debit("CNY", "10.00"))
		require.NoError(t, err)
	}
	require.False(t, r.waitInSync(t).Drift)

	// The failover: Redis back before x, records gone too; then y, y2, y3.
	_, err = r.eng.Restore(ctx, beforeX, true)
	require.NoError(t, err)
	require.NoError(t, r.rdb.Del(ctx, cluster.Tx(h, "x"), cluster.Tx(h, "x2")).Err())
	for _, id := range []string{"y", "y2", "y3"} {
		_, err = r.eng.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err)
	}
	var id int64
	require.Eventually(t, func() bool {
		return r.led.Pool().QueryRow(ctx, "SELECT id FROM ledger.set_aside WHERE holder = $1 AND seq = 4 AND resolved_at IS NULL", h).Scan(&id) == nil
	}, 2*time.Minute, 50*time.Millisecond, "the ledger sets y3 aside")
	head := func() (seq int64, digest, avail string) {
		require.NoError(t, r.led.Pool().QueryRow(ctx, `SELECT h.seq, h.digest::text, coalesce((SELECT amount::text FROM ledger.accounts
			WHERE holder = h.holder AND kind = 'avail' AND asset = 'CNY'), '') FROM ledger.holders h WHERE holder = $1`, h).Scan(&seq, &digest, &avail))
		return
	}
	seq0, dig0, avail0 := head()
	require.Equal(t, int64(3), seq0, "open, x, x2")

	code, stdout, stderr := r.run("repair", "--set-aside", strconv.FormatInt(id, 10), "--note", "merge the fork")
	assert.NotEqual(t, exitOK, code, "a forked event is not repaired by a note: stdout %s stderr %s", stdout, stderr)
	seq1, dig1, avail1 := head()
	assert.Equal(t, []any{seq0, dig0, avail0}, []any{seq1, dig1, avail1}, "the ledger's history is unchanged")
}
