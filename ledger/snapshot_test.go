package ledger_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

func TestSnapshots_RecentInstructionsForRebuild(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	h, evs := holderEvents(t)
	l := openLedger(t)
	_, err := l.Apply(ctx, stored.Entries(evs...))
	require.NoError(t, err)
	var want []stored.RecentInstruction
	for _, f := range evs {
		ev, err := stored.ParseEvent(f)
		require.NoError(t, err)
		want = append(want, stored.RecentInstruction{ID: ev.ID, FP: ev.FP, TsMs: ev.TS, State: ev.State})
	}

	t.Run("without a cut-off, none", func(t *testing.T) {
		snaps, err := l.Snapshots(ctx, []string{h}, 0)
		require.NoError(t, err)
		assert.Nil(t, snaps[h].Recent)
	})
	t.Run("every instruction since the cut-off, in seq order", func(t *testing.T) {
		snaps, err := l.Snapshots(ctx, []string{h}, want[0].TsMs)
		require.NoError(t, err)
		assert.Equal(t, want, snaps[h].Recent)
		snaps, err = l.Snapshots(ctx, []string{h}, want[2].TsMs+1)
		require.NoError(t, err)
		assert.Empty(t, snaps[h].Recent)
	})
	t.Run("an id used again after its TTL counts once, by its latest instruction", func(t *testing.T) {
		// Made by hand: Redis forgot "a" and took it again at seq 4.
		_, err := l.Pool().Exec(ctx, `INSERT INTO ledger.instructions (holder, seq, id, fp, ts_ms, counterparty, memo, ops, state, digest)
			VALUES ($1, 4, 'a', '\x0a9a1b', $2, 'external', '', '[]', '{}', '\x0d')`, h, want[2].TsMs+1)
		require.NoError(t, err)
		snaps, err := l.Snapshots(ctx, []string{h}, want[0].TsMs)
		require.NoError(t, err)
		assert.Equal(t, []stored.RecentInstruction{want[0], want[2],
			{ID: "a", FP: "0a9a1b", TsMs: want[2].TsMs + 1, State: "{}"}}, snaps[h].Recent)
	})
}
