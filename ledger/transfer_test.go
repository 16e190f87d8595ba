package ledger_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// tradeEvents opens a buyer and a seller, each with an open order, and
// commits a trade between them (the buyer's frozen USDT for the seller's
// frozen BTC) and a payment (the buyer's available CNY to the seller). It
// returns the transfer ids and each holder's events.
func tradeEvents(t *testing.T) (buyer, seller string, ids []string, byHolder map[string][]map[string]string) {
	t.Helper()
	ctx := context.Background()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	buyer, seller = "buy-"+tag, "sell-"+tag
	apply(t, []instructions.Instruction{
		instructions.New("o", buyer).Open().Credit("USDT", "1000").Credit("CNY", "50.00").Freeze("USDT", "500", "ord-b", time.Hour),
		instructions.New("o", seller).Open().Credit("BTC", "1").Freeze("BTC", "0.5", "ord-s", time.Hour),
	})
	ids = []string{"trade-" + tag, "pay-" + tag}
	for _, tr := range []instructions.Transfer{
		{ID: ids[0], Parts: []instructions.Part{
			{Holder: buyer, Ops: instructions.Instruction{}.SettleLeg("ord-b", "USDT", "100").Credit("BTC", "0.002").Ops},
			{Holder: seller, Ops: instructions.Instruction{}.SettleLeg("ord-s", "BTC", "0.002").Credit("USDT", "100").Ops}}},
		{ID: ids[1], Parts: []instructions.Part{
			{Holder: buyer, Ops: instructions.Instruction{}.Debit("CNY", "20.00").Ops},
			{Holder: seller, Ops: instructions.Instruction{}.Credit("CNY", "20.00").Ops}}},
	} {
		st, err := eng.Transfer(ctx, tr)
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st)
		require.True(t, st.Complete)
	}
	byHolder = map[string][]map[string]string{}
	for _, f := range outboxEvents(t, []string{buyer, seller}) {
		byHolder[f["holder"]] = append(byHolder[f["holder"]], f)
	}
	// open, the trade's prepare and commit, the payment's one step (it has one
	// payer: docs/transfers.md, One payer)
	require.Len(t, byHolder[buyer], 4)
	require.Len(t, byHolder[seller], 4)
	return buyer, seller, ids, byHolder
}

// transferRow is a row of ledger.transfer_balances.
type transferRow struct {
	Asset                        *string
	Clearing, Net                string
	Prepared, Committed, Aborted int64
	Holders                      []string
}

func transferRows(t *testing.T, l *ledger.Ledger, id string) map[string]transferRow {
	t.Helper()
	rows, err := l.Pool().Query(context.Background(), `SELECT asset, clearing::text, net::text, prepared, committed, aborted, holders
		FROM ledger.transfer_balances WHERE transfer = $1`, id)
	require.NoError(t, err)
	out := map[string]transferRow{}
	for rows.Next() {
		var r transferRow
		require.NoError(t, rows.Scan(&r.Asset, &r.Clearing, &r.Net, &r.Prepared, &r.Committed, &r.Aborted, &r.Holders))
		out[*r.Asset] = r
	}
	require.NoError(t, rows.Err())
	return out
}

func TestSink_TransferParts(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	buyer, seller, ids, evs := tradeEvents(t)
	trade := ids[0]

	t.Run("the parts' events carry xfer, digested at the end; the others do not", func(t *testing.T) {
		for _, h := range []string{buyer, seller} {
			prev := ""
			for i, f := range evs[h] {
				ev, err := stored.ParseEvent(f)
				require.NoError(t, err)
				if i == 0 {
					assert.NotContains(t, f, "xfer")
				} else {
					assert.Contains(t, ids, f["xfer"])
					assert.Equal(t, instructions.TransferHoldPrefix+ev.Xfer, ev.CP)
					noXfer := ev
					noXfer.Xfer = ""
					assert.NotEqual(t, ev.Digest, stored.Digest(prev, noXfer))
				}
				assert.Equal(t, ev.Digest, stored.Digest(prev, ev), "%s seq %d chains", h, ev.Seq)
				assert.Equal(t, f, ev.Fields())
				prev = ev.Digest
			}
		}
	})

	l := openLedger(t)
	rep, err := l.Apply(ctx, stored.Entries(evs[buyer]...))
	require.NoError(t, err)
	require.Equal(t, ledger.Report{Applied: 4}, rep)

	t.Run("with one part's commit in, the clearing account is open", func(t *testing.T) {
		rows := transferRows(t, l, trade)
		assert.Equal(t, transferRow{Asset: ptr("USDT"), Clearing: "100000000", Net: "0", Prepared: 1, Committed: 1, Holders: []string{buyer}}, rows["USDT"])
		assert.Equal(t, "-200000", rows["BTC"].Clearing)
		open, err := l.UnsettledTransfers(ctx, 10)
		require.NoError(t, err)
		require.Len(t, open, 2)
		assert.Equal(t, ledger.TransferBalance{Transfer: trade, Clearing: map[string]string{"USDT": "100000000", "BTC": "-200000"},
			Prepared: 1, Committed: 1, Holders: []string{buyer}, FirstMs: open[1].FirstMs}, open[1])
		assert.Equal(t, map[string]string{"CNY": "2000"}, open[0].Clearing, "the payment")
	})

	rep, err = l.Apply(ctx, stored.Entries(evs[seller]...))
	require.NoError(t, err)
	require.Equal(t, ledger.Report{Applied: 4}, rep)

	t.Run("with every part's commit in, the clearing account is zero and the parts balance", func(t *testing.T) {
		holders := []string{buyer, seller}
		if seller < buyer {
			holders = []string{seller, buyer}
		}
		rows := transferRows(t, l, trade)
		require.Len(t, rows, 2)
		for _, a := range []string{"USDT", "BTC"} {
			assert.Equal(t, transferRow{Asset: ptr(a), Clearing: "0", Net: "0", Prepared: 2, Committed: 2, Holders: holders}, rows[a])
		}
		rows = transferRows(t, l, ids[1])
		assert.Equal(t, transferRow{Asset: ptr("CNY"), Clearing: "0", Net: "0", Prepared: 0, Committed: 2, Holders: holders}, rows["CNY"])
		open, err := l.UnsettledTransfers(ctx, 10)
		require.NoError(t, err)
		assert.Empty(t, open)
		var n int64
		require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) FROM ledger.instructions WHERE transfer = $1`, trade).Scan(&n))
		assert.Equal(t, int64(4), n)
		requireSameAsRedis(t, l, holders)
	})

	t.Run("rebuild writes the parts' idempotency records as the library did", func(t *testing.T) {
		snaps, err := l.Snapshots(ctx, []string{buyer, seller}, 1)
		require.NoError(t, err)
		for _, h := range []string{buyer, seller} {
			require.Len(t, snaps[h].Recent, 4)
			for _, r := range snaps[h].Recent[1:] {
				rec, err := rdb.Get(ctx, cluster.Tx(h, r.ID)).Result()
				require.NoError(t, err, "%s %s", h, r.ID)
				assert.Equal(t, rec, stored.AppliedRecord(r.FP, r.State))
			}
		}
	})
}

func ptr(s string) *string { return &s }

// A payment settled from an order's hold and given back (its payee gone
// since it was seen) goes back into the hold: the give-back's restore
// moves the counterparty's amount to the payer's frozen account, and the
// ledger agrees with Redis, the transfer's clearing account at zero.
func TestSink_APaymentGivenBackIntoItsHold(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	payer, payee := "gb-payer-"+tag, "gb-payee-"+tag
	apply(t, []instructions.Instruction{
		instructions.New("o", payer).Open().Credit("CNY", "50.00").Freeze("CNY", "30.00", "ord-1", time.Hour),
		instructions.New("o", payee).Open(),
	})
	pay := func(id string, ops instructions.Instruction) engine.TransferState {
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
			{Holder: payer, Ops: ops.Ops}, {Holder: payee, Ops: instructions.Instruction{}.Credit("CNY", "5.00").Ops}}})
		require.NoError(t, err)
		return st
	}
	require.Equal(t, engine.TransferCommitted, pay("seen-"+tag, instructions.Instruction{}.Debit("CNY", "5.00")).Status)
	eng.Flush()
	gone := cluster.Holder(payee) + ":gone" // the payee gone since it was seen
	require.NoError(t, rdb.Rename(ctx, cluster.Holder(payee), gone).Err())
	st := pay("back-"+tag, instructions.Instruction{}.SettleLeg("ord-1", "CNY", "5.00"))
	require.NoError(t, rdb.Rename(ctx, gone, cluster.Holder(payee)).Err())
	require.Equal(t, engine.TransferAborted, st.Status, "%+v", st)
	s, err := eng.State(ctx, payer)
	require.NoError(t, err)
	assert.Equal(t, "30.00", s.Holds["ord-1"].Legs["CNY"], "back into the order's hold")

	l := openLedger(t)
	rep, err := l.Apply(ctx, stored.Entries(outboxEvents(t, []string{payer, payee})...))
	require.NoError(t, err)
	require.Equal(t, 6, rep.Applied, "the opens, the first payment's two runs, the charge and its give-back")
	assert.Equal(t, "0", transferRows(t, l, "back-"+tag)["CNY"].Clearing)
	requireSameAsRedis(t, l, []string{payer, payee})
}
