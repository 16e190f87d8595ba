package ledger_test

// Probes of the ledger with the events that are hardest for it: where what
// it gives back could differ from what Redis applied, or one event could
// hold back everyone.

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/lua"
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

// edgeHolders applies, through the library's two doors and transfers, the
// instructions whose fields are at their limits, and returns their holders
// and each holder's events:
//   - holders of 64 characters with '.', ':', '-' and '_', and one named like
//     a transfer's clearing account ("x:<transfer>"), which is the payee of
//     that very transfer;
//   - ids of 64 characters, and ids like the steps a transfer part's id is
//     stored as (":c", ":p"); a transfer id of 60 characters beginning "x:";
//   - memos of 256 bytes of UTF-8, with quotes, backslashes, U+0085, U+2028
//     and a character outside the BMP, a memo that reads like a transfer
//     part's, an empty one given and one left out;
//   - the counterparty left out, "external" given, another holder, the
//     holder itself, 64 characters;
//   - amounts of 2^53-1 minor units credited, debited, frozen, settled in
//     part and in full, in points too; every op; 64 ops in one instruction;
//     a suspended holder;
//   - a payment, a trade settling a whole hold without an amount, and a
//     trade aborted at prepare.
func edgeHolders(t *testing.T) ([]string, map[string][]map[string]string) {
	t.Helper()
	ctx := context.Background()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	long := func(prefix string) string { return prefix + strings.Repeat("a.b:c-d_", 8)[:64-len(prefix)] }
	h1, h2 := long("e1"+tag), long("e2"+tag)
	xfer := "x:" + tag + strings.Repeat(".p:y-q_", 9)[:58-len(tag)]
	payee := "x:" + xfer
	buyer, seller := "eb-"+tag, "es-"+tag
	const maxCNY, maxUnits = "90071992547409.91", "9007199254740991"
	memo256 := strings.Repeat("€", 81) + "ab" + "\"\\\u0085\u2028🙂"
	require.Len(t, memo256, 256)
	many := instructions.New("many-ops", h1)
	for i := range 32 {
		many = many.Credit("USDT", strconv.Itoa(i+1)).Debit("USDT", strconv.Itoa(i+1))
	}
	require.Len(t, many.Ops, 64)

	require.Equal(t, 13, apply(t, []instructions.Instruction{
		instructions.New(long("i"), h1).Open().Credit("CNY", maxCNY).WithMemo(memo256),
		instructions.New(":c", h1).Debit("CNY", maxCNY).WithCounterparty("external").WithMemo("transfer " + xfer + ": commit"),
		instructions.New(":p", h1).Credit("CNY", maxCNY).WithCounterparty(h2).WithMemo(""),
		instructions.New("x", h1).Freeze("CNY", maxCNY, "h:1.x-_", time.Hour).EarnPoints(maxUnits).FreezePoints(maxUnits, "h:1.x-_").
			GrantCoupon("c:1", time.Time{}).LockCoupon("c:1", "h:1.x-_"),
		instructions.New("settle-part", h1).SettleLeg("h:1.x-_", "CNY", "0.01").WithCounterparty(h1),
		instructions.New("settle-rest", h1).Settle("h:1.x-_").WithCounterparty(long("cp")),
		instructions.New("points", h1).EarnPoints(maxUnits).SpendPoints(maxUnits).GrantCoupon("c:2", time.Now().Add(time.Hour)).RedeemCoupon("c:2"),
		instructions.New("suspend", h1).Suspend().Credit("CNY", "1.00"),
		instructions.New("resume", h1).Resume(),
		many,
		instructions.New("o", payee).Open(),
		instructions.New("o", buyer).Open().Credit("USDT", "1000").Freeze("USDT", "500", "ord-b", time.Hour),
		instructions.New("o", seller).Open().Credit("BTC", "1").Freeze("BTC", "0.002", "ord-s", time.Hour),
	}))
	// The JSON door: amounts in minor units, an empty memo and "external"
	// given, then both left out. Sent straight to a master, which has the
	// library only once the engine loaded it.
	require.NoError(t, eng.Load(ctx))
	for i, text := range []string{
		`{"id":"j:c","holder":"` + h2 + `","counterparty":"external","memo":"","ops":[{"op":"open"},{"op":"credit","asset":"CNY","amount":"` + maxUnits + `"}]}`,
		`{"id":"j:p","holder":"` + h2 + `","ops":[{"op":"debit","asset":"CNY","amount":"1"}]}`,
	} {
		id := []string{"j:c", "j:p"}[i]
		slot := cluster.HolderSlot(h2)
		keys := []string{cluster.Holder(h2), cluster.Tx(h2, id), cluster.Outbox(slot), cluster.Expiry(slot)}
		reply, err := rdb.FCall(ctx, lua.FuncApplyJSON, keys, text).Slice()
		require.NoError(t, err)
		require.Len(t, reply, 2)
		require.NotContains(t, reply[1], "err\n", "%s", reply[1])
	}
	for _, c := range []struct {
		tr     instructions.Transfer
		status string
	}{
		{instructions.Transfer{ID: xfer, Parts: []instructions.Part{
			{Holder: h2, Ops: instructions.Instruction{}.Debit("CNY", "1.00").Ops},
			{Holder: payee, Ops: instructions.Instruction{}.Credit("CNY", "1.00").Ops}}}, engine.TransferCommitted},
		{instructions.Transfer{ID: "trade:" + tag, Parts: []instructions.Part{
			{Holder: buyer, Ops: instructions.Instruction{}.SettleLeg("ord-b", "USDT", "100").Credit("BTC", "0.002").Ops},
			{Holder: seller, Ops: instructions.Instruction{}.Settle("ord-s").Credit("USDT", "100").Ops}}}, engine.TransferCommitted},
		{instructions.Transfer{ID: "abort:" + tag, Parts: []instructions.Part{
			{Holder: buyer, Ops: instructions.Instruction{}.Debit("USDT", "1").Ops},
			{Holder: seller, Ops: instructions.Instruction{}.Debit("USDT", "1000000").Ops},
			{Holder: payee, Ops: instructions.Instruction{}.Credit("USDT", "1000001").Ops}}}, engine.TransferAborted},
	} {
		st, err := eng.Transfer(ctx, c.tr)
		require.NoError(t, err)
		require.Equal(t, c.status, st.Status, "%+v", st)
		require.True(t, st.Complete, "%+v", st)
	}
	holders := []string{h1, h2, payee, buyer, seller}
	byHolder := map[string][]map[string]string{}
	for _, f := range outboxEvents(t, holders) {
		byHolder[f["holder"]] = append(byHolder[f["holder"]], f)
	}
	return holders, byHolder
}

// TestLedgerAdversary_EdgeInstructionsComeBackAsRedisWroteThem: the events
// of edgeHolders, through the sink (twice: the second time all skipped as
// duplicates), come back from the ledger as Redis wrote them: every field
// from ledger.events, with its digest checking again; each by its id and
// in its statement with its id, counterparty, memo and transfer; the state
// Redis has; the idempotency record Redis keeps, as a rebuild writes it
// again; and books that audit clean.
func TestLedgerAdversary_EdgeInstructionsComeBackAsRedisWroteThem(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	holders, evs := edgeHolders(t)
	var all []map[string]string
	for _, h := range holders {
		all = append(all, evs[h]...)
	}
	l := openLedger(t)
	rep, err := l.Apply(ctx, stored.Entries(all...))
	require.NoError(t, err)
	require.Equal(t, ledger.Report{Applied: len(all)}, rep)
	rep, err = l.Apply(ctx, stored.Entries(all...))
	require.NoError(t, err)
	require.Equal(t, ledger.Report{Duplicates: len(all)}, rep, "each one's digest, stored as bytes, is the one delivered again")

	requireEventsVerbatim(t, l, evs)
	requireSameAsRedis(t, l, holders)
	snaps, err := l.Snapshots(ctx, holders, 1)
	require.NoError(t, err)
	for _, h := range holders {
		st, err := l.Statement(ctx, h, 0, ledger.MaxStatementLimit)
		require.NoError(t, err)
		require.Len(t, st.Events, len(evs[h]))
		for i, f := range evs[h] {
			ev := mustEvent(t, f)
			a, err := l.Instruction(ctx, h, ev.ID)
			require.NoError(t, err, "holder %s id %s", h, ev.ID)
			assert.Equal(t, st.Events[i], a, "holder %s id %s: by its id as in its statement", h, ev.ID)
			assert.Equal(t, [5]any{ev.ID, ev.Seq, ev.CP, ev.Memo, ev.Xfer}, [5]any{a.ID, a.Seq, a.Counterparty, a.Memo, a.Transfer},
				"holder %s seq %d", h, ev.Seq)
		}
		require.Len(t, snaps[h].Recent, len(evs[h]), "every id of the holder is used once")
		for _, r := range snaps[h].Recent {
			rec, err := rdb.Get(ctx, cluster.Tx(h, r.ID)).Result()
			require.NoError(t, err, "holder %s id %s", h, r.ID)
			assert.Equal(t, rec, stored.AppliedRecord(r.FP, r.State), "holder %s id %s: the record a rebuild writes is Redis's", h, r.ID)
		}
	}
	a, err := l.Audit(ctx, 10)
	require.NoError(t, err)
	assert.True(t, a.Advanced, "%+v", a)
	unsettled, err := l.UnsettledTransfers(ctx, 100)
	require.NoError(t, err)
	assert.Empty(t, unsettled)

	// Written by version 6 and converted by migration 7, they come back the
	// same, and delivered again they are the events the ledger has.
	want := viewOf(t, l, holders)
	asVersion6(t, l)
	_, err = ledger.Migrate(ctx, l.Pool())
	require.NoError(t, err)
	assert.Equal(t, want, viewOf(t, l, holders))
	requireEventsVerbatim(t, l, evs)
	rep, err = l.Apply(ctx, stored.Entries(all...))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Duplicates: len(all)}, rep, "delivered again after the conversion: duplicates, not conflicts")
}

// TestLedgerAdversary_AnAccountAnInstructionLeavesAsItWasHasNoRow: Redis
// writes a holder's field only when an instruction changes it, so an asset
// or points credited and debited back in one instruction (frozen and
// released too) leave no field; nor does the ledger leave a row, which a
// rebuild would write into Redis as a zero balance the holder never had.
func TestLedgerAdversary_AnAccountAnInstructionLeavesAsItWasHasNoRow(t *testing.T) {
	needServers(t)
	h := "net0-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	require.Equal(t, 3, apply(t, []instructions.Instruction{
		instructions.New("o", h).Open().Credit("CNY", "5.00"),
		instructions.New("a", h).Credit("USD", "5.00").Debit("USD", "5.00").EarnPoints("9").SpendPoints("9"),
		instructions.New("b", h).Credit("EUR", "1.00").Freeze("EUR", "1.00", "o-1", 0).Release("o-1").Debit("EUR", "1.00"),
	}))
	redis, err := eng.Snapshots(context.Background(), []string{h})
	require.NoError(t, err)
	require.Equal(t, map[string][2]int64{"CNY": {500, 0}}, redis[h].Balances, "Redis has no field for USD, EUR or points")
	require.Nil(t, redis[h].Points)
	l := openLedger(t)
	rep, err := l.Apply(context.Background(), stored.Entries(outboxEvents(t, []string{h})...))
	require.NoError(t, err)
	require.Equal(t, ledger.Report{Applied: 3}, rep)
	requireSameAsRedis(t, l, []string{h})
}

// TestLedgerAdversary_TwoSinksOnANewHoldersFirstEvents: two sinks (two
// relays, one delivering what the other claimed) write a new holder's seq 1
// and seq 2 at once. The holder has no row yet to lock: the one with seq 2,
// not seeing seq 1 committed, parked it, and the one with seq 1, having read
// the parked events before, committed seq 1 alone, so that seq 2 waited in
// ledger.parked until the holder's next event, reported in flight all the
// while. Each sink now waits for the other on the holder itself: both
// events apply. The first sink is held inside its write by a lock on a
// counterparty's account that the test takes.
func TestLedgerAdversary_TwoSinksOnANewHoldersFirstEvents(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	other, h := &history{holder: "two-o-" + tag}, &history{holder: "two-h-" + tag}
	writeAll(t, l, []map[string]string{other.open()}) // the bank's points account has its row
	first, second := h.open(), h.credit("c2", 5)

	hold, err := l.Pool().Begin(ctx)
	require.NoError(t, err)
	defer hold.Rollback(ctx) //nolint:errcheck // released below
	_, err = hold.Exec(ctx, "SELECT 1 FROM ledger.accounts WHERE holder = 'bank' AND kind = 'cp' AND asset = 'points' FOR UPDATE")
	require.NoError(t, err)
	waiting := func() int64 {
		var n int64
		require.NoError(t, l.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
		return n
	}
	done := make(chan error, 2)
	go func() { _, err := l.Apply(ctx, stored.Entries(first)); done <- err }()
	require.Eventually(t, func() bool { return waiting() == 1 }, time.Minute, 10*time.Millisecond, "seq 1's write waits for the account")
	var early []error
	go func() { _, err := l.Apply(ctx, stored.Entries(second)); done <- err }()
	// seq 2's write either ends (it parked) or waits for seq 1's.
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			early = append(early, err)
			return true
		default:
			return waiting() == 2
		}
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, hold.Rollback(ctx))
	for range 2 - len(early) {
		early = append(early, <-done)
	}
	for _, err := range early {
		require.NoError(t, err)
	}
	snaps, err := l.Snapshots(ctx, []string{h.holder}, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(2), snaps[h.holder].Seq, "both events applied")
	var parked int64
	require.NoError(t, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.parked").Scan(&parked))
	assert.Zero(t, parked)
}

// TestLedgerAdversary_PartsTheLedgerCannotDerive: events of transfer parts
// that the engine does not write but a client calling the library's apply
// function straight could (a memo of its own, a step it does not have, a
// step its memo does not name, an id not of the part's form), beside ones
// it derives (a transfer id with ':'), an ordinary event with an empty
// counterparty and an id like a stored step, and one with a part's id,
// counterparty and memo but no transfer: each is stored whole or
// derived as ledger.events gives it back verbatim, and found by its id.
func TestLedgerAdversary_PartsTheLedgerCannotDerive(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "parts-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	credit := func(units int64) string {
		h.cny += units
		return `[{"op":"credit","asset":"CNY","units":"` + strconv.FormatInt(units, 10) + `","mv":[["CNY","cp","avail","` + strconv.FormatInt(units, 10) + `"]]}]`
	}
	evs := []map[string]string{h.open()}
	for _, e := range []struct{ id, cp, memo, xfer string }{
		{"x:t1:c", "x:t1", "transfer t1: commit", "t1"},
		{"x:t2:c", "x:t2", "", "t2"},
		{"x:t3:q", "x:t3", "transfer t3: abort", "t3"},
		{"x:t4:p", "x:t4", "transfer t4: commit", "t4"},
		{"x:t:5:a", "x:t:5", "transfer t:5: abort", "t:5"},
		{"pay-t6", "x:t6", "transfer t6: commit", "t6"},
		{":a", "", "", ""},
		{"x:t7:c", "x:t7", "transfer t7: commit", ""},
	} {
		evs = append(evs, h.next(e.id, e.cp, e.memo, e.xfer, credit(int64(len(evs)))))
	}
	writeAll(t, l, evs)
	requireEventsVerbatim(t, l, map[string][]map[string]string{h.holder: evs})
	var derived []string
	rows, err := l.Pool().Query(ctx, "SELECT id FROM ledger.instructions WHERE holder = $1 AND counterparty = '' AND transfer IS NOT NULL ORDER BY seq", h.holder)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		derived = append(derived, id)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{":c", ":a"}, derived, "only the parts whose id, counterparty and memo are the transfer's")
	for _, f := range evs {
		a, err := l.Instruction(ctx, h.holder, f["id"])
		if assert.NoError(t, err, "id %s", f["id"]) {
			assert.Equal(t, [4]string{f["id"], f["cp"], f["memo"], f["xfer"]}, [4]string{a.ID, a.Counterparty, a.Memo, a.Transfer})
		}
	}
}

// TestLedgerAdversary_ASeqNotInItsOwnDigitsIsMalformed: an event written
// straight into an outbox with seq "+3" (or "03"), its state's seq the same,
// read as 3. Parked behind its holder's gap, it was kept as seq "3" beside
// its state's "+3", which no sink could read again: every later write of the
// holder, and of every holder written with it, failed. It is malformed when
// read, set aside at once; the holder's seq 2 and the other holder's events
// apply.
func TestLedgerAdversary_ASeqNotInItsOwnDigitsIsMalformed(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	for i, seq := range []string{"+3", "03"} {
		a, b := &history{holder: "sq-a" + strconv.Itoa(i) + "-" + tag}, &history{holder: "sq-b" + strconv.Itoa(i) + "-" + tag}
		open, second := a.open(), a.credit("a2", 5)
		odd := a.credit("a3", 1)
		odd["seq"] = seq
		odd["state"] = strings.Replace(odd["state"], `"s":"3"`, `"s":"`+seq+`"`, 1)
		rep, err := l.Apply(ctx, stored.Entries(open, odd, b.open()))
		require.NoError(t, err)
		assert.Equal(t, ledger.Report{Applied: 2, SetAside: 1}, rep, "seq %s", seq)
		rep, err = l.Apply(ctx, stored.Entries(second, b.credit("b2", 7)))
		require.NoError(t, err, "seq %s", seq)
		assert.Equal(t, ledger.Report{Applied: 2}, rep, "seq %s", seq)
		set, err := l.SetAside(ctx, 10)
		require.NoError(t, err)
		require.NotEmpty(t, set)
		assert.Equal(t, a.holder, set[len(set)-1].Holder)
		assert.Contains(t, set[len(set)-1].Reason, `malformed: event: seq "`+seq+`"`)
	}
	var parked int64
	require.NoError(t, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.parked").Scan(&parked))
	assert.Zero(t, parked)
}

// TestLedgerAdversary_ParkedBytesThatAreNotUTF8: an event whose memo holds
// bytes that are not UTF-8 (the engine and the JSON door refuse such a memo;
// a client calling the library's apply function itself, or writing to an
// outbox, does not) arrives behind a gap. Parked as JSON, its memo came back
// with U+FFFD in their place, and once the gap filled it was set aside as
// "digest does not chain", which tells an operator the histories forked (and
// to rebuild the holder from the ledger, discarding what Redis applied). It
// is set aside when it arrives, as PostgreSQL's refusal would have set it
// aside in order: the bytes are not text.
func TestLedgerAdversary_ParkedBytesThatAreNotUTF8(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "utf-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	open, second := h.open(), h.credit("c2", 5)
	h.cny++
	third := h.next("c3", "bank", "caf\xe9", "", `[{"op":"credit","asset":"CNY","units":"1","mv":[["CNY","cp","avail","1"]]}]`)
	rep, err := l.Apply(ctx, stored.Entries(open, third))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Applied: 1, SetAside: 1}, rep)
	rep, err = l.Apply(ctx, stored.Entries(second))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Applied: 1}, rep)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, 1)
	assert.Equal(t, int64(3), set[0].Seq)
	assert.Contains(t, set[0].Reason, `field "memo" is not UTF-8`)
	assert.NotContains(t, set[0].Reason, "digest")
}

// TestLedgerAdversary_AnOwnAccountOutOfRangeIsSetAside: events written
// straight into an outbox that take a holder's own account out of
// 0..2^53-1, where Redis keeps every stored value: a credit of 2^63-1 and
// one more unit (past what a snapshot reads, so that every snapshot of the
// holders read with it failed: reconcile and rebuild for everyone), and a
// debit of what the holder does not have. Each is set aside; the others'
// events apply and their snapshots read.
func TestLedgerAdversary_AnOwnAccountOutOfRangeIsSetAside(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	big, neg, ok := &history{holder: "rng-big-" + tag}, &history{holder: "rng-neg-" + tag}, &history{holder: "rng-ok-" + tag}
	batch := []map[string]string{big.open(), big.credit("c1", 1<<63-1), big.credit("c2", 1), neg.open(),
		neg.next("d1", "bank", "", "", `[{"op":"debit","asset":"CNY","units":"5","mv":[["CNY","avail","cp","5"]]}]`),
		ok.open(), ok.credit("c1", 1<<53-1)}
	rep, err := l.Apply(ctx, stored.Entries(batch...))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Applied: 4, SetAside: 2, Parked: 1}, rep)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, 2)
	for _, s := range set {
		assert.Equal(t, int64(2), s.Seq)
		assert.Contains(t, s.Reason, "stays within 0 .. 2^53-1 (SQLSTATE 23514)")
	}
	snaps, err := l.Snapshots(ctx, []string{big.holder, neg.holder, ok.holder}, 0)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1<<53 - 1, 0}, snaps[ok.holder].Balances["CNY"])
	assert.Equal(t, int64(1), snaps[big.holder].Seq)
	assert.Equal(t, int64(1), snaps[neg.holder].Seq)
}
