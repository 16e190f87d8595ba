package ledger_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// history makes a holder's events as the library would, digests chained, so
// that thousands go straight into the sink without a Redis round trip each.
type history struct {
	holder string
	seq    int64
	digest string
	cny    int64 // available CNY, minor units
}

// next makes the holder's next event; ops is the event's ops JSON.
func (h *history) next(id, cp, memo, xfer, ops string) map[string]string {
	h.seq++
	s := strconv.FormatInt(h.seq, 10)
	ev := stored.Event{Holder: h.holder, Seq: h.seq, ID: id, FP: hex.EncodeToString([]byte(id)), TS: 1796000000000 + h.seq, CP: cp,
		Ops: ops, State: fmt.Sprintf(`{"s":"%s","st":"active","b":{"CNY":["%d","0"]}}`, s, h.cny), Memo: memo, Xfer: xfer}
	ev.Digest = stored.Digest(h.digest, ev)
	h.digest = ev.Digest
	return ev.Fields()
}

// credit makes a credit of units minor units of CNY.
func (h *history) credit(id string, units int64) map[string]string {
	h.cny += units
	return h.next(id, "bank", "", "", fmt.Sprintf(`[{"op":"credit","asset":"CNY","units":"%d","mv":[["CNY","cp","avail","%d"]]}]`, units, units))
}

func (h *history) open() map[string]string {
	return h.next("open-"+h.holder, "bank", "welcome", "", `[{"op":"open"},{"op":"earn_points","asset":"points","units":"2000","mv":[["points","cp","avail","2000"]]}]`)
}

func writeAll(t *testing.T, l *ledger.Ledger, evs []map[string]string) {
	t.Helper()
	for lo := 0; lo < len(evs); lo += 1000 {
		rep, err := l.Apply(context.Background(), stored.Entries(evs[lo:min(lo+1000, len(evs))]...))
		require.NoError(t, err)
		require.Zero(t, rep.Refused+rep.Parked+rep.Duplicates, "%+v", rep)
	}
}

func requireCode(t *testing.T, err error, code instructions.Code) {
	t.Helper()
	var e *instructions.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, code, e.Code, "%v", err)
}

func TestStatement_PagesThroughThousandsOfEvents(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	const n = 5000
	big, other := &history{holder: "stmt-big"}, &history{holder: "stmt-other"}
	evs := []map[string]string{big.open(), other.open()}
	for i := 2; i <= n; i++ {
		evs = append(evs, big.credit("c-"+strconv.Itoa(i), int64(i)))
		if i%10 == 0 {
			evs = append(evs, other.credit("c-"+strconv.Itoa(i), 1))
		}
	}
	writeAll(t, l, evs)

	t.Run("the default page is the first 100, with where the next starts", func(t *testing.T) {
		st, err := l.Statement(ctx, big.holder, 0, 0)
		require.NoError(t, err)
		require.Len(t, st.Events, ledger.DefaultStatementLimit)
		assert.Equal(t, int64(1), st.Events[0].Seq)
		assert.Equal(t, int64(100), st.Events[99].Seq)
		assert.Equal(t, int64(100), st.NextAfterSeq)
	})
	t.Run("pages of the largest size cover the history once, in order", func(t *testing.T) {
		var seqs []int64
		after, pages := int64(0), 0
		for {
			st, err := l.Statement(ctx, big.holder, after, ledger.MaxStatementLimit)
			require.NoError(t, err)
			pages++
			for _, e := range st.Events {
				seqs = append(seqs, e.Seq)
			}
			if st.NextAfterSeq == 0 {
				break
			}
			assert.Equal(t, st.Events[len(st.Events)-1].Seq, st.NextAfterSeq)
			after = st.NextAfterSeq
		}
		require.Len(t, seqs, n)
		for i, s := range seqs {
			require.Equal(t, int64(i+1), s)
		}
		assert.Equal(t, n/ledger.MaxStatementLimit, pages, "a last page that is exactly full says there is no next")
	})
	t.Run("at the page boundary", func(t *testing.T) {
		st, err := l.Statement(ctx, big.holder, n-2, 1)
		require.NoError(t, err)
		require.Len(t, st.Events, 1)
		assert.Equal(t, int64(n-1), st.Events[0].Seq)
		assert.Equal(t, int64(n-1), st.NextAfterSeq, "one more event follows")
		st, err = l.Statement(ctx, big.holder, n-1, 1)
		require.NoError(t, err)
		require.Len(t, st.Events, 1)
		assert.Equal(t, int64(n), st.Events[0].Seq)
		assert.Zero(t, st.NextAfterSeq, "nothing follows the last event")
		st, err = l.Statement(ctx, big.holder, n, 10)
		require.NoError(t, err)
		assert.Empty(t, st.Events)
		assert.NotNil(t, st.Events, "an empty page is [], not null")
		assert.Zero(t, st.NextAfterSeq)
	})
	t.Run("amounts are decimals at the registry's scales", func(t *testing.T) {
		st, err := l.Statement(ctx, big.holder, 0, 2)
		require.NoError(t, err)
		open, credit := st.Events[0], st.Events[1]
		assert.Equal(t, "welcome", open.Memo)
		assert.Equal(t, []ledger.StatementOp{{Op: "open", Movements: []ledger.Movement{}},
			{Op: "earn_points", Asset: "points", Amount: "2000",
				Movements: []ledger.Movement{{Asset: "points", From: "counterparty", To: "available", Amount: "2000"}}}}, open.Ops)
		assert.Equal(t, ledger.AppliedInstruction{ID: "c-2", Seq: 2, TsMs: 1796000000002, Counterparty: "bank",
			Ops: []ledger.StatementOp{{Op: "credit", Asset: "CNY", Amount: "0.02",
				Movements: []ledger.Movement{{Asset: "CNY", From: "counterparty", To: "available", Amount: "0.02"}}}}}, credit)
		st, err = l.Statement(ctx, big.holder, 1233, 1)
		require.NoError(t, err)
		assert.Equal(t, "12.34", st.Events[0].Ops[0].Amount)
	})
	t.Run("the page query reads the primary key, not the table", func(t *testing.T) {
		_, err := l.Pool().Exec(ctx, "ANALYZE ledger.instructions")
		require.NoError(t, err)
		rows, err := l.Pool().Query(ctx, "EXPLAIN "+ledger.StatementQuery, big.holder, int64(2500), 101)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		t.Logf("plan:\n%s", strings.Join(plan, "\n"))
		assert.Contains(t, strings.Join(plan, "\n"), "Index Scan using instructions_pkey on instructions")
		assert.NotContains(t, strings.Join(plan, "\n"), "Seq Scan")
		assert.NotContains(t, strings.Join(plan, "\n"), "Sort", "the index gives the order")
	})
	t.Run("an instruction by id reads the index by id, and a transfer part's the index on transfer", func(t *testing.T) {
		rows, err := l.Pool().Query(ctx, "EXPLAIN "+ledger.InstructionQuery, big.holder, "c-1234", "")
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		plan := strings.Join(lines, "\n")
		t.Logf("plan:\n%s", plan)
		assert.Regexp(t, "Index (Only )?Scan using instructions_id on instructions", plan)
		assert.Regexp(t, "(Index|Bitmap Index) Scan (using|on) instructions_transfer", plan)
		assert.NotContains(t, plan, "Seq Scan")
	})
	t.Run("an instruction by id, the latest under an id used again", func(t *testing.T) {
		a, err := l.Instruction(ctx, big.holder, "c-1234")
		require.NoError(t, err)
		assert.Equal(t, int64(1234), a.Seq)
		assert.Equal(t, "12.34", a.Ops[0].Movements[0].Amount)
		writeAll(t, l, []map[string]string{big.credit("c-1234", 7)})
		a, err = l.Instruction(ctx, big.holder, "c-1234")
		require.NoError(t, err)
		assert.Equal(t, int64(n+1), a.Seq)
		assert.Equal(t, "0.07", a.Ops[0].Amount)
	})
	t.Run("bad input and unknown names get their codes", func(t *testing.T) {
		_, err := l.Statement(ctx, "nobody-here", 0, 0)
		requireCode(t, err, instructions.CodeHolderNotFound)
		_, err = l.Statement(ctx, "{bad}", 0, 0)
		requireCode(t, err, instructions.CodeInvalidID)
		_, err = l.Statement(ctx, big.holder, 0, ledger.MaxStatementLimit+1)
		requireCode(t, err, instructions.CodeInvalidInstruction)
		_, err = l.Statement(ctx, big.holder, -1, 10)
		requireCode(t, err, instructions.CodeInvalidInstruction)
		_, err = l.Instruction(ctx, big.holder, "never-sent")
		requireCode(t, err, instructions.CodeInstructionNotFound)
		_, err = l.Instruction(ctx, "nobody-here", "c-2")
		requireCode(t, err, instructions.CodeInstructionNotFound)
		_, err = l.Instruction(ctx, big.holder, "..")
		requireCode(t, err, instructions.CodeInvalidID)
	})
}

func TestStatement_ShowsATransfersPartWithItsTransfer(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "stmt-payee"}
	evs := []map[string]string{h.open()}
	h.cny += 250000
	evs = append(evs, h.next("x:pay-7:c", "x:pay-7", "transfer pay-7: commit", "pay-7",
		`[{"op":"credit","asset":"CNY","units":"250000","mv":[["CNY","cp","avail","250000"]]},{"op":"credit","asset":"BTC","units":"150000","mv":[["BTC","cp","avail","150000"]]},{"op":"credit","asset":"GONE","units":"42","mv":[["GONE","cp","avail","42"]]}]`))
	writeAll(t, l, evs)

	a, err := l.Instruction(ctx, h.holder, "x:pay-7:c")
	require.NoError(t, err)
	assert.Equal(t, "pay-7", a.Transfer)
	assert.Equal(t, "x:pay-7", a.Counterparty)
	assert.Equal(t, "transfer pay-7: commit", a.Memo)
	var amounts []string
	for _, op := range a.Ops {
		amounts = append(amounts, op.Asset+" "+op.Amount+" "+op.Movements[0].Amount)
	}
	assert.Equal(t, []string{"CNY 2500.00 2500.00", "BTC 0.00150000 0.00150000", "GONE 42 42"}, amounts,
		"an asset not in the registry shows in minor units")
	st, err := l.Statement(ctx, h.holder, 1, 10)
	require.NoError(t, err)
	require.Len(t, st.Events, 1)
	assert.Equal(t, a, st.Events[0])
	open, err := l.Instruction(ctx, h.holder, "open-"+h.holder)
	require.NoError(t, err)
	assert.Empty(t, open.Transfer, "an ordinary instruction names no transfer")

	// A trade's commit closes the order holds it took from; units 1 on a
	// close says the part settled the hold whole: shown as such, no amount.
	writeAll(t, l, []map[string]string{h.next("x:tr-8:c", "x:tr-8", "transfer tr-8: commit", "tr-8",
		`[{"op":"close","hold":"ord-1","units":"1"},{"op":"close","hold":"ord-2"}]`)})
	a, err = l.Instruction(ctx, h.holder, "x:tr-8:c")
	require.NoError(t, err)
	require.Len(t, a.Ops, 2)
	assert.Equal(t, ledger.StatementOp{Op: "close", Hold: "ord-1", Whole: true, Movements: []ledger.Movement{}}, a.Ops[0])
	assert.Equal(t, ledger.StatementOp{Op: "close", Hold: "ord-2", Movements: []ledger.Movement{}}, a.Ops[1])
}
