package ledger_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// v1Events makes a holder's first two events as a version without dv wrote
// them: opened with 10.00 CNY, then credited 5.00, digests of version 1.
func v1Events(holder string) []map[string]string {
	evs := []stored.Event{
		{Holder: holder, Seq: 1, ID: "o1", FP: "f1", TS: 1700000000000, CP: "external",
			Ops:   `[{"op":"open"},{"op":"credit","asset":"CNY","units":"1000","mv":[["CNY","cp","avail","1000"]]}]`,
			State: `{"s":"1","st":"active","b":{"CNY":["1000","0"]},"c":{},"h":{}}`},
		{Holder: holder, Seq: 2, ID: "c2", FP: "f2", TS: 1700000000001, CP: "external",
			Ops:   `[{"op":"credit","asset":"CNY","units":"500","mv":[["CNY","cp","avail","500"]]}]`,
			State: `{"s":"2","st":"active","b":{"CNY":["1500","0"]},"c":{},"h":{}}`, Memo: "second"},
	}
	prev := ""
	var out []map[string]string
	for _, ev := range evs {
		ev.Digest = stored.Digest(prev, ev)
		prev = ev.Digest
		out = append(out, ev.Fields())
	}
	return out
}

// A ledger holding version 1 history, rebuilt into Redis, then fed the
// version 2 events of the script: every event verifies by its own version,
// the ledger keeps which, and Redis and the ledger agree (what reconcile
// compares). A version 2 event stripped of its dv, or with its xfer moved
// into its memo (which version 1 could not tell), is refused.
func TestSink_V1HistoryThenV2Events(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	h := "dv-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	l := openLedger(t)

	rep, err := l.Apply(ctx, stored.Entries(v1Events(h)...))
	require.NoError(t, err)
	require.Equal(t, ledger.Report{Applied: 2}, rep)

	snaps, err := l.Snapshots(ctx, []string{h}, 0)
	require.NoError(t, err)
	s := *snaps[h]
	wrote, err := eng.Restore(ctx, &s, false)
	require.NoError(t, err)
	require.True(t, wrote, "rebuilt from the ledger")
	_, err = eng.Apply(ctx, instructions.New("c3", h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	// A transfer's steps make events with xfer.
	_, err = eng.Apply(ctx, instructions.New("o", h+"-b").Open())
	require.NoError(t, err)
	st, err := eng.Transfer(ctx, instructions.Transfer{ID: "t-" + h, Parts: []instructions.Part{
		{Holder: h, Ops: instructions.Instruction{}.Debit("CNY", "2.00").Ops},
		{Holder: h + "-b", Ops: instructions.Instruction{}.Credit("CNY", "2.00").Ops}}})
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status)
	evs := outboxEvents(t, []string{h})
	require.NotEmpty(t, evs)
	var part map[string]string // an event of the transfer's
	for _, f := range evs {
		require.Equal(t, "2", f["dv"], "the script writes version 2")
		if f["xfer"] != "" && part == nil {
			part = f
		}
	}
	require.NotNil(t, part)

	t.Run("a v2 event without its dv does not verify", func(t *testing.T) {
		bad := copyFields(evs[0])
		delete(bad, "dv")
		rep, err := l.Apply(ctx, stored.Entries(bad))
		require.NoError(t, err)
		assert.Equal(t, ledger.Report{SetAside: 1}, rep, "a chain that does not verify is set aside")
	})
	t.Run("a v2 event whose xfer moved into its memo does not verify", func(t *testing.T) {
		rep, err := l.Apply(ctx, stored.Entries(evs[:1]...))
		require.NoError(t, err)
		require.Equal(t, 1, rep.Applied)
		require.Equal(t, "4", part["seq"], "the transfer's first step follows the credit")
		bad := copyFields(part)
		bad["memo"] += "\n" + bad["xfer"]
		delete(bad, "xfer")
		rep, err = l.Apply(ctx, stored.Entries(bad))
		require.NoError(t, err)
		assert.Equal(t, ledger.Report{SetAside: 1}, rep, "a chain that does not verify is set aside")
	})
	t.Run("the v2 events chain on the v1 history", func(t *testing.T) {
		rep, err := l.Apply(ctx, stored.Entries(evs[1:]...))
		require.NoError(t, err)
		assert.Equal(t, ledger.Report{Applied: len(evs) - 1}, rep)
		requireSameAsRedis(t, l, []string{h})
	})
	t.Run("the ledger keeps each event's version, and each row verifies by it", func(t *testing.T) {
		rows, err := l.Pool().Query(ctx, `SELECT seq, id, fp, ts_ms, counterparty, ops, state, digest, memo, coalesce(transfer, ''), dv
			FROM ledger.events WHERE holder = $1 ORDER BY seq`, h)
		require.NoError(t, err)
		defer rows.Close()
		var dvs []int
		prev := ""
		for rows.Next() {
			ev := stored.Event{Holder: h}
			require.NoError(t, rows.Scan(&ev.Seq, &ev.ID, &ev.FP, &ev.TS, &ev.CP, &ev.Ops, &ev.State, &ev.Digest, &ev.Memo, &ev.Xfer, &ev.DV))
			assert.Equal(t, ev.Digest, stored.Digest(prev, ev), "seq %d", ev.Seq)
			prev = ev.Digest
			dvs = append(dvs, ev.DV)
		}
		require.NoError(t, rows.Err())
		want := []int{stored.DigestV1, stored.DigestV1}
		for range evs {
			want = append(want, stored.DigestV2)
		}
		assert.Equal(t, want, dvs)
	})
}
