package ledger_test

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// TestSink_SetsAsideWhatItCannotApply writes one batch of 50 holders' events
// in which three holders' third event cannot be applied: one PostgreSQL
// refuses (a memo holding U+0000, its digest chained so that only PostgreSQL
// objects), one malformed (no ops), one whose digest does not chain. The
// write succeeds; each of the three is set aside with its reason and the
// holder's later events park behind it; every other holder's events apply,
// to the state Redis has.
func TestSink_SetsAsideWhatItCannotApply(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	holders, evs := workload(t, seed, 50, 1500)
	byHolder := map[string][]int{} // indexes of each holder's events, in seq order
	for i, e := range evs {
		byHolder[e["holder"]] = append(byHolder[e["holder"]], i)
	}
	var bad []string
	for _, h := range holders {
		if len(byHolder[h]) >= 4 && len(bad) < 3 {
			bad = append(bad, h)
		}
	}
	require.Len(t, bad, 3)
	sent := slices.Clone(evs)
	behind := 0
	spoil := func(h string, change func(f map[string]string)) {
		i := byHolder[h][2]
		require.Equal(t, "3", evs[i]["seq"])
		f := maps.Clone(evs[i])
		change(f)
		sent[i] = f
		behind += len(byHolder[h]) - 3
	}
	spoil(bad[0], func(f map[string]string) {
		f["memo"] = "poison\x00x"
		ev, err := stored.ParseEvent(f)
		require.NoError(t, err)
		f["digest"] = stored.Digest(evs[byHolder[bad[0]][1]]["digest"], ev)
	})
	spoil(bad[1], func(f map[string]string) { delete(f, "ops") })
	spoil(bad[2], func(f map[string]string) { f["digest"] = strings.Repeat("0", 40) })

	l := openLedger(t)
	rep, err := l.Apply(ctx, stored.Entries(sent...))
	require.NoError(t, err, "one event PostgreSQL refuses does not fail the write")
	assert.Equal(t, 3, rep.SetAside)
	assert.Equal(t, behind, rep.Parked, "the three holders' later events wait behind theirs")
	assert.Equal(t, len(evs)-3-behind, rep.Applied)

	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, 3)
	reasons := map[string]string{}
	for _, e := range set {
		reasons[e.Holder] = e.Reason
		assert.Equal(t, int64(3), e.Seq)
	}
	assert.Contains(t, reasons[bad[0]], "PostgreSQL refused it")
	assert.Contains(t, reasons[bad[0]], "0x00")
	assert.Contains(t, reasons[bad[1]], `malformed: event: no field "ops"`)
	assert.Contains(t, reasons[bad[2]], "digest does not chain")
	n, err := l.SetAsideCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	refused, err := l.RefusedCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{bad[2]: 1}, refused, "reconcile and rebuild see the one whose digest does not chain as another history")

	snaps, err := l.Snapshots(ctx, bad, 0)
	require.NoError(t, err)
	for _, h := range bad {
		assert.Equal(t, int64(2), snaps[h].Seq, "holder %s stops before its event set aside", h)
	}
	requireSameAsRedis(t, l, slices.DeleteFunc(slices.Clone(holders), func(h string) bool { return slices.Contains(bad, h) }))

	// Sent again (a relay whose acknowledgement failed), nothing is set
	// aside twice.
	_, err = l.Apply(ctx, stored.Entries(sent...))
	require.NoError(t, err)
	n, err = l.SetAsideCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
}

// TestRepair_AsReadOnceTheCauseIsGone: a constraint added to the ledger
// refuses one holder's instructions (an integrity constraint, SQLSTATE 23):
// the holder's first event is set aside, its later ones park, the others
// apply. Once the constraint is gone, Repair applies the event as it was read
// and the ones parked behind it, and marks the row resolved; a second Repair
// of the row is refused.
func TestRepair_AsReadOnceTheCauseIsGone(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	holders, evs := workload(t, seed, 10, 200)
	x := holders[0]
	l := openLedger(t)
	_, err := l.Pool().Exec(ctx, "ALTER TABLE ledger.instructions ADD CONSTRAINT not_x CHECK (holder <> '"+x+"')")
	require.NoError(t, err)
	rep, err := l.Apply(ctx, stored.Entries(evs...))
	require.NoError(t, err)
	assert.Equal(t, 1, rep.SetAside)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, 1)
	assert.Equal(t, x, set[0].Holder)
	assert.Equal(t, int64(1), set[0].Seq)
	assert.Contains(t, set[0].Reason, "SQLSTATE 23514")
	refused, err := l.RefusedCount(ctx)
	require.NoError(t, err)
	assert.NotContains(t, refused, x, "a cause that can be mended: its holder waits, its history is the ledger's")

	_, err = l.Repair(ctx, set[0].ID, nil, "")
	require.Error(t, err, "the constraint still refuses it")
	_, err = l.Pool().Exec(ctx, "ALTER TABLE ledger.instructions DROP CONSTRAINT not_x")
	require.NoError(t, err)
	rep, err = l.Repair(ctx, set[0].ID, nil, "")
	require.NoError(t, err)
	assert.Equal(t, rep.Unparked+1, rep.Applied, "the event and every one parked behind it")
	assert.Zero(t, rep.Parked+rep.SetAside)
	requireSameAsRedis(t, l, holders)
	n, err := l.SetAsideCount(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = l.Repair(ctx, set[0].ID, nil, "")
	assert.ErrorIs(t, err, ledger.ErrNotSetAside)
}

// An event no instruction can write, its digest chained as the library
// would (an entry added to an outbox by hand), is set aside as malformed:
// a holder that is no id ("w{9}": rebuild would write it back into Redis
// under a key of another slot; no read can name it), a memo over 256 bytes.
// The ledger took both before.
func TestSink_SetsAsideAHolderThatIsNoIDAndAMemoOverTheContracts(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	holders, evs := workload(t, rand.Uint64(), 2, 10)
	rechain := func(h string, change func(f map[string]string)) (first map[string]string) {
		prev := ""
		for i, e := range evs {
			if e["holder"] != h {
				continue
			}
			f := maps.Clone(e)
			change(f)
			ev, err := stored.ParseEvent(f)
			require.NoError(t, err)
			f["digest"] = stored.Digest(prev, ev)
			prev, evs[i] = f["digest"], f
			if first == nil {
				first = f
			}
		}
		return first
	}
	noID := "w{9}" + holders[0]
	rechain(holders[0], func(f map[string]string) { f["holder"] = noID })
	long := rechain(holders[1], func(f map[string]string) {
		if f["seq"] == "1" {
			f["memo"] = strings.Repeat("m", 257)
		}
	})
	require.Equal(t, "1", long["seq"])

	l := openLedger(t)
	rep, err := l.Apply(ctx, stored.Entries(evs...))
	require.NoError(t, err)
	of := func(h string) (n int) {
		for _, e := range evs {
			if e["holder"] == h {
				n++
			}
		}
		return n
	}
	assert.Equal(t, of(noID)+1, rep.SetAside, "every event of the holder that is no id, the first of the other")
	assert.Equal(t, of(holders[1])-1, rep.Parked, "the other's later events wait behind its first")
	assert.Zero(t, rep.Applied)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, e := range set {
		reasons[e.Holder] = e.Reason
	}
	assert.Contains(t, reasons[noID], `malformed: event: holder "`+noID+`" is no id`)
	assert.Contains(t, reasons[holders[1]], "memo of 257 bytes, at most 256")
}
