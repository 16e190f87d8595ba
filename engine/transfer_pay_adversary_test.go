package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The one-payer path (docs/transfers.md, One payer) against what can go
// wrong around it: several drivers at once, drivers of other
// configurations, answers lost, a window or a hold running out. Each test
// checks that money is conserved and that no part applies twice.

// tenCNY opens a holder with 10.00 CNY.
func tenCNY(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }

// recoverWith runs e's recovery passes until transfer id is complete.
func recoverWith(t *testing.T, e *engine.Engine, id string) engine.TransferState {
	t.Helper()
	r, ctx := engine.NewRecovery(e, &engine.RecoveryOptions{Logger: quiet}), context.Background()
	deadline := time.Now().Add(2 * time.Minute) // only a failing run reaches it
	for {
		require.NoError(t, r.Recover(ctx))
		st, err := e.GetTransfer(ctx, id)
		require.NoError(t, err)
		if st.Complete {
			return st
		}
		require.True(t, time.Now().Before(deadline), "transfer %s still %s, not complete", id, st.Status)
		time.Sleep(100 * time.Millisecond)
	}
}

// paidOnce checks the end of payment(hs[0], "4.00", hs[1], hs[2]) from 10.00
// CNY: the payer charged once, each payee paid once, each by one event.
func paidOnce(t *testing.T, hs []string, before map[string]string, seqs []int64) {
	t.Helper()
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	for i, want := range []string{"2.00", "4.00", "4.00"} {
		st := state(t, hs[i])
		assert.Equal(t, want, st.Balances["CNY"].Available, "holder %d", i)
		assert.Equal(t, seqs[i]+1, st.Seq, "holder %d: one event", i)
	}
}

// paymentEnded checks the end of payment(hs[0], "4.00", hs[1], hs[2]) as
// status says: aborted, nothing applied anywhere; committed, paidOnce.
func paymentEnded(t *testing.T, status string, hs []string, before map[string]string, seqs []int64) {
	t.Helper()
	if status != engine.TransferAborted {
		paidOnce(t, hs, before, seqs)
		return
	}
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	for i, h := range hs {
		assert.Equal(t, seqs[i], state(t, h).Seq, "holder %d: nothing applied", i)
	}
}

func seqsOf(t *testing.T, hs []string) []int64 {
	var out []int64
	for _, h := range hs {
		out = append(out, state(t, h).Seq)
	}
	return out
}

// An engine whose idempotency TTL is short (twoPhase: one second) drives a
// one-payer transfer begun by an engine with the default TTL: it writes the
// steps' records, the fence and the done record with the TTL of the
// transfer's beginner, whose window the record keeps, not with its own.
func TestTransfer_OnePayerBegunLongDrivenShort(t *testing.T) {
	needRedis(t)
	long, short, ctx := shortTimeout(), twoPhase(), context.Background()
	past := func() { time.Sleep(2 * time.Second) } // past the short engine's TTL

	t.Run("the short engine runs the payer's part and stops; recovery commits", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil, nil)
		before, seqs := totals(t, hs...), seqsOf(t, hs)
		tr := payment(hs[0], "4.00", hs[1], hs[2])
		require.NoError(t, long.TransferStep(ctx, tr, "begin", 0))
		require.NoError(t, short.TransferStep(ctx, tr, "commit", 0))
		past()
		st := recoverUntilComplete(t, tr.ID)
		assert.Equal(t, engine.TransferCommitted, st.Status, "the payer was charged: the transfer commits")
		paidOnce(t, hs, before, seqs)
	})
	t.Run("the short engine drives it to the end; the client's retry replays", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil, nil)
		before, seqs := totals(t, hs...), seqsOf(t, hs)
		tr := payment(hs[0], "4.00", hs[1], hs[2])
		require.NoError(t, long.TransferStep(ctx, tr, "begin", 0))
		st, err := short.Transfer(ctx, tr)
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status)
		require.True(t, st.Complete)
		past()
		again, err := long.Transfer(ctx, tr)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferCommitted, again.Status)
		assert.True(t, again.Replayed, "the record is still there")
		paidOnce(t, hs, before, seqs)
	})
	t.Run("the short engine's recovery fences; the stalled driver wakes later", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil)
		b0 := state(t, hs[0])
		tr := payment(hs[0], "4.00", hs[1])
		require.NoError(t, long.TransferStep(ctx, tr, "begin", 0))
		st := recoverWith(t, short, tr.ID)
		require.Equal(t, engine.TransferAborted, st.Status)
		past()
		err := long.TransferStep(ctx, tr, "commit", 0)
		var e *engine.Error
		require.ErrorAs(t, err, &e, "the fence answers for the payer's part")
		assert.True(t, e.Replayed)
		assert.Equal(t, b0, state(t, hs[0]), "nothing was taken")
	})
}

// The reverse: a transfer begun by an engine whose TTL is too short for the
// one-payer path runs the two phases whoever drives it next.
func TestTransfer_OnePayerBegunShortDrivenLong(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil, nil)
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	tr := payment(hs[0], "4.00", hs[1], hs[2])
	require.NoError(t, driverSteps(ctx, twoPhaseMinutes(), tr, "begin,prepare:0"))
	st, err := eng.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	assert.True(t, st.Complete)
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	for i, want := range []string{"2.00", "4.00", "4.00"} {
		s := state(t, hs[i])
		assert.Equal(t, want, s.Balances["CNY"].Available, "holder %d", i)
		assert.Equal(t, seqs[i]+2, s.Seq, "holder %d: a prepare and a commit, the two phases", i)
		assert.Empty(t, s.Holds)
	}
}

// eventsOf are holder's outbox events of transfer id.
func eventsOf(t *testing.T, holder, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range readRaw(t, holder).Events {
		if ev["xfer"] == id {
			out = append(out, ev)
		}
	}
	return out
}

// Several drivers at once: the client's call sent again while the first is
// on its way, and recovery taking over the same transfer past its deadline.
// Every driver answers the same outcome; the payer's part and each credit
// apply once, and the ledger gets one event per part, each against the
// transfer's clearing account. In the rounds where the deadline is never
// reached (a minute, however slow the machine) the payment commits.
func TestTransfer_OnePayerManyDriversAtOnce(t *testing.T) {
	needRedis(t)
	patient := engine.New(rdb, &engine.Options{TransferTimeout: time.Minute, Logger: quiet})
	for round := range 4 {
		hs := holdersOnMasters(t, tenCNY, nil, nil)
		before, seqs := totals(t, hs...), seqsOf(t, hs)
		tr := payment(hs[0], "4.00", hs[1], hs[2])
		ctx := context.Background()
		driver := patient
		if round%2 == 1 { // begun, then past its deadline: recovery races the drivers
			driver = shortTimeout()
			require.NoError(t, driver.TransferStep(ctx, tr, "begin", 0))
			time.Sleep(2 * shortTransferTimeout)
		}
		answers := make(chan string, 8)
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := driver.Transfer(ctx, tr)
				if assert.NoError(t, err) && st.Status != engine.TransferPending {
					answers <- st.Status
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = engine.NewRecovery(driver, &engine.RecoveryOptions{Logger: quiet}).Recover(ctx)
		}()
		wg.Wait()
		close(answers)
		st := recoverUntilComplete(t, tr.ID)
		if round%2 == 0 {
			require.Equal(t, engine.TransferCommitted, st.Status, "round %d: never past its deadline, the payment commits", round)
		}
		for a := range answers {
			assert.Equal(t, st.Status, a, "round %d: every driver answers the same", round)
		}
		assert.Equal(t, before, totals(t, hs...), "round %d: money is conserved", round)
		if st.Status == engine.TransferAborted {
			for i, h := range hs {
				assert.Equal(t, seqs[i], state(t, h).Seq, "round %d, holder %d: nothing applied", round, i)
			}
			continue
		}
		paidOnce(t, hs, before, seqs)
		for i, h := range hs {
			evs := eventsOf(t, h, tr.ID)
			if assert.Len(t, evs, 1, "round %d, holder %d: one event", round, i) {
				assert.Equal(t, "x:"+tr.ID, evs[0]["cp"], "against the clearing account")
			}
		}
	}
}

// loseAnswers is a go-redis hook that, for every pipelined command match
// accepts, either lets it run and loses its answer (ran) or does not send
// it: what a broken connection does. The engine answers UNAVAILABLE.
type loseAnswers struct {
	match func(args []any) bool
	ran   bool
}

func (h loseAnswers) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h loseAnswers) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h loseAnswers) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var send, lost []redis.Cmder
		for _, c := range cmds {
			if h.match(c.Args()) {
				lost = append(lost, c)
			}
			if !h.match(c.Args()) || h.ran {
				send = append(send, c)
			}
		}
		var err error
		if len(send) > 0 {
			err = next(ctx, send)
		}
		for _, c := range lost {
			c.SetErr(errors.New("read tcp: connection reset by peer"))
		}
		return err
	}
}

// transferAction matches the transfer function's action on any record.
// A one-payer transfer's record is written by plain commands: its claim
// stands for begin, its booking for the decision and finish.
func transferAction(action string) func([]any) bool {
	return func(a []any) bool {
		switch {
		case len(a) > 5 && a[1] == "transfer" && a[5] == action:
			return true
		case action == "begin": // the claim
			return len(a) > 2 && a[0] == "hsetnx" && a[2] == "claim"
		case action == "decide": // the booking
			return len(a) > 3 && a[0] == "hset" && a[2] == "status" && a[3] == engine.TransferCommitted
		}
		return false
	}
}

// stepOn matches the apply call of instruction id on holder.
func stepOn(holder, id string) func([]any) bool {
	return func(a []any) bool { return len(a) > 4 && a[1] == "apply" && a[4] == cluster.Tx(holder, id) }
}

// Redis answering UNAVAILABLE at each step of a driver, the step having run
// or not: the driver stops where it is; recovery, then the client's call sent
// again, take the transfer to the outcome the step allows, each part applied
// once.
func TestTransfer_OnePayerAnswerLostAtEachStep(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name  string
		match func(hs []string, commit string) func([]any) bool
		ran   bool
		want  string // after recovery; "" when there is no record for it
	}{
		{"begin ran", func([]string, string) func([]any) bool { return transferAction("begin") }, true, engine.TransferAborted},
		{"begin not sent", func([]string, string) func([]any) bool { return transferAction("begin") }, false, ""},
		{"the payer's run ran", func(hs []string, c string) func([]any) bool { return stepOn(hs[0], c) }, true, engine.TransferCommitted},
		{"the payer's run not sent", func(hs []string, c string) func([]any) bool { return stepOn(hs[0], c) }, false, engine.TransferAborted},
		{"a credit ran", func(hs []string, c string) func([]any) bool { return stepOn(hs[2], c) }, true, engine.TransferCommitted},
		{"a credit not sent", func(hs []string, c string) func([]any) bool { return stepOn(hs[2], c) }, false, engine.TransferCommitted},
		// The booking (the record marked committed and done) is written after
		// the driver answered, every part applied: lost, the record stays
		// preparing in its index until recovery books it.
		{"the booking ran", func([]string, string) func([]any) bool { return transferAction("decide") }, true, engine.TransferCommitted},
		{"the booking not sent", func([]string, string) func([]any) bool { return transferAction("decide") }, false, engine.TransferCommitted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil, nil)
			before, seqs := totals(t, hs...), seqsOf(t, hs)
			tr := payment(hs[0], "4.00", hs[1], hs[2])
			ids, err := eng.TransferStepIDs(tr, 0)
			require.NoError(t, err)
			client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
			defer client.Close()
			client.AddHook(loseAnswers{match: c.match(hs, ids["commit"]), ran: c.ran})
			broken := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
			ctx := context.Background()

			st, err := broken.Transfer(ctx, tr)
			booking := strings.HasPrefix(c.name, "the booking")
			if booking {
				require.NoError(t, err)
				assert.True(t, st.Complete, "every part applied before the booking")
				broken.Flush()
			} else if err == nil {
				assert.False(t, st.Complete, "the driver could not finish")
			} else {
				assert.ErrorIs(t, err, engine.ErrUnavailable)
			}
			if c.want != "" {
				st = recoverUntilComplete(t, tr.ID)
				assert.Equal(t, c.want, st.Status)
			}
			again, err := shortTimeout().Transfer(ctx, tr)
			require.NoError(t, err)
			if c.want != "" {
				assert.Equal(t, c.want, again.Status, "the client's retry learns the outcome")
			}
			require.True(t, again.Complete)
			paymentEnded(t, again.Status, hs, before, seqs)
		})
	}
}

// What the parts themselves may hold against the path: a suspended payee
// still receives (a suspended holder accepts credits), a suspended payer
// aborts it; a payer's part may credit too, and a credit of its own that
// would overflow is the payer's rejection, checked in its run.
func TestTransfer_OnePayerPartsOfEveryKind(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	suspend := func(h string) { apply(t, newIn(h).Suspend()) }
	cases := []struct {
		name   string
		payer  func(instructions.Instruction) instructions.Instruction
		before func(hs []string)
		parts  func(hs []string) []instructions.Part
		want   string
		code   error
		opIdx  int
		paid   []string // CNY available of payer and payee at the end
	}{
		{"a suspended payee is paid", tenCNY, func(hs []string) { suspend(hs[1]) },
			func(hs []string) []instructions.Part {
				return []instructions.Part{part(hs[0], ops().Debit("CNY", "4.00")), part(hs[1], ops().Credit("CNY", "4.00"))}
			}, engine.TransferCommitted, nil, 0, []string{"6.00", "4.00"}},
		{"a suspended payer aborts", tenCNY, func(hs []string) { suspend(hs[0]) },
			func(hs []string) []instructions.Part {
				return []instructions.Part{part(hs[0], ops().Debit("CNY", "4.00")), part(hs[1], ops().Credit("CNY", "4.00"))}
			}, engine.TransferAborted, engine.ErrHolderSuspended, 0, []string{"10.00", ""}},
		{"the payer's part credits too", tenCNY, nil,
			func(hs []string) []instructions.Part {
				return []instructions.Part{part(hs[0], ops().Debit("CNY", "5.00").Credit("CNY", "1.00")),
					part(hs[1], ops().Credit("CNY", "4.00"))}
			}, engine.TransferCommitted, nil, 0, []string{"6.00", "4.00"}},
		{"the payer's own credit would overflow",
			func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("CNY", instructions.FromUnits(instructions.MaxUnits, 2))
			}, nil,
			func(hs []string) []instructions.Part {
				return []instructions.Part{part(hs[0], ops().Credit("CNY", "1.00").Debit("CNY", "2.00")),
					part(hs[1], ops().Credit("CNY", "1.00"))}
			}, engine.TransferAborted, engine.ErrOverflow, 0, []string{instructions.FromUnits(instructions.MaxUnits, 2), ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, c.payer, nil)
			if c.before != nil {
				c.before(hs)
			}
			b0, p0 := state(t, hs[0]), state(t, hs[1])
			tr := instructions.Transfer{ID: newID("pay"), Parts: c.parts(hs)}
			st, err := eng.Transfer(ctx, tr)
			require.NoError(t, err)
			require.Equal(t, c.want, st.Status, "%v", st.Error)
			assert.True(t, st.Complete)
			for i, h := range hs {
				assert.Equal(t, c.paid[i], state(t, h).Balances["CNY"].Available, "holder %d", i)
			}
			if c.want == engine.TransferCommitted {
				assert.Equal(t, b0.Seq+1, state(t, hs[0]).Seq, "the payer's part applied once")
				assert.Equal(t, p0.Seq+1, state(t, hs[1]).Seq, "the payee's part applied once")
				return
			}
			require.NotNil(t, st.PartIndex)
			assert.Equal(t, 0, *st.PartIndex)
			require.NotNil(t, st.Error)
			assert.ErrorIs(t, st.Error, c.code)
			assert.Equal(t, c.opIdx, st.Error.OpIndex)
			assert.Equal(t, b0, state(t, hs[0]), "the payer's whole state is as it was")
			assert.Equal(t, p0, state(t, hs[1]), "the payee's whole state is as it was")
		})
	}
}

// The payer's settle names an order's hold that expires between begin and
// the payer's run: the run is refused HOLD_EXPIRED, the transfer aborts,
// and the order can still be released in full.
func TestTransfer_OnePayerHoldExpiresBeforeThePayersRun(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("USDT", "1000").Freeze("USDT", "500", "ord-1", 500*time.Millisecond)
	}, nil)
	tr := instructions.Transfer{ID: newID("fill"), Parts: []instructions.Part{
		part(hs[0], ops().SettleLeg("ord-1", "USDT", "100")), part(hs[1], ops().Credit("USDT", "100"))}}
	require.NoError(t, shortTimeout().TransferStep(ctx, tr, "begin", 0))
	b0, p0 := state(t, hs[0]), state(t, hs[1])
	expires := b0.Holds["ord-1"].ExpiresMs
	require.Positive(t, expires)
	for time.Now().UnixMilli() <= expires+100 { // the same machine's clock as the server's
		time.Sleep(50 * time.Millisecond)
	}

	st, err := shortTimeout().Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.True(t, st.Complete)
	require.NotNil(t, st.PartIndex)
	assert.Equal(t, 0, *st.PartIndex)
	assert.ErrorIs(t, st.Error, engine.ErrHoldExpired)
	assert.Equal(t, b0, state(t, hs[0]), "nothing was taken from the order")
	assert.Equal(t, p0, state(t, hs[1]))
	res := apply(t, newIn(hs[0]).Release("ord-1"))
	assert.Equal(t, instructions.Balance{Available: "1000.000000", Frozen: "0.000000"}, res.Balances["USDT"])
}

// The transfer record lost mid-way (a master failed over without a replica
// that had it) after the payer's run and one credit: the client's call sent
// again begins a new record, whose payer's run and credit replay, and the
// other credit applies: each part once.
func TestTransfer_OnePayerRecordLostMidway(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil, nil)
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	tr := payment(hs[0], "4.00", hs[1], hs[2])
	require.NoError(t, driverSteps(ctx, shortTimeout(), tr, "begin,commit:0,commit:1"))
	require.NoError(t, rdb.Del(ctx, cluster.Transfer(tr.ID)).Err())

	st, err := shortTimeout().Transfer(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	assert.True(t, st.Complete)
	paidOnce(t, hs, before, seqs)
	// The lost record's entry in its slot's index is dropped, not acted on.
	require.NoError(t, engine.NewRecovery(shortTimeout(), &engine.RecoveryOptions{Logger: quiet}).Recover(ctx))
	paidOnce(t, hs, before, seqs)
}

// The window (until_ms) passing at each step, with no driver or recovery in
// it: afterwards no step is sent again, whatever it would do, and the parts
// done stay done once. Past begin alone nothing was charged; past the payer's
// run and a credit, the other credit is left for an operator.
func TestTransfer_OnePayerWindowPassesAtEachStep(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name, steps string
		paid        []string // CNY available of the payer and the payees at the end
		stuck       int      // the parts the record does not say finished
	}{
		{"after begin", "begin", []string{"10.00", "", ""}, 3},
		{"after the payer's run", "begin,commit:0", []string{"2.00", "", ""}, 3},
		{"after a credit", "begin,commit:0,commit:1", []string{"2.00", "4.00", ""}, 3},
		{"after the decision", "begin,commit:0,commit:1,decide", []string{"2.00", "4.00", ""}, 3},
	}
	ttl := 10 * shortTransferTimeout // the least TTL of the one-payer path
	driver := engine.New(rdb, &engine.Options{IdempotencyTTL: ttl, TransferTimeout: shortTransferTimeout, Logger: quiet})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil, nil)
			seqs := seqsOf(t, hs)
			tr := payment(hs[0], "4.00", hs[1], hs[2])
			ctx := context.Background()
			forgetOnCleanup(t, tr.ID)
			require.NoError(t, driverSteps(ctx, driver, tr, c.steps))
			time.Sleep(ttl) // past the window and the steps' records

			parts, _ := recoverStuck(t, tr.ID)
			assert.Equal(t, c.stuck, parts, "left for an operator, and counted")
			st, err := shortTimeout().Transfer(ctx, tr)
			require.NoError(t, err)
			assert.False(t, st.Complete)
			for i, h := range hs {
				s := state(t, h)
				assert.Equal(t, c.paid[i], s.Balances["CNY"].Available, "holder %d", i)
				applied := int64(0)
				if c.paid[i] != "" && c.paid[i] != "10.00" {
					applied = 1
				}
				assert.Equal(t, seqs[i]+applied, s.Seq, "holder %d: at most once", i)
			}
		})
	}
}

// A payee filled after the begin's read, between the commit point and its
// credit: the credit is refused OVERFLOW and the transfer stays committed,
// unfinished. Once room is made, recovery applies the credit, once: the
// refusal is not left to replay until the window has passed.
func TestTransfer_OnePayerCreditRefusedOverflowAfterTheCommitPoint(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil, nil)
	seqs := seqsOf(t, hs)
	tr := payment(hs[0], "4.00", hs[1], hs[2])
	require.NoError(t, driverSteps(ctx, shortTimeout(), tr, "begin,commit:0"))
	full := int64(instructions.MaxUnits - 100)
	apply(t, newIn(hs[1]).Credit("CNY", cny(full)))

	st, err := shortTimeout().Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "the payer's run was the commit point")
	require.False(t, st.Complete, "the full payee's credit is refused")
	assert.Equal(t, cny(full), state(t, hs[1]).Balances["CNY"].Available)
	assert.Equal(t, "4.00", state(t, hs[2]).Balances["CNY"].Available)

	apply(t, newIn(hs[1]).Debit("CNY", cny(1000))) // room is made
	st = recoverUntilComplete(t, tr.ID)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	want := []int64{200, full - 1000 + 400, 400}
	for i, h := range hs {
		assert.Equal(t, want[i], cnyOf(t, h), "holder %d", i)
	}
	assert.Equal(t, seqs[0]+1, state(t, hs[0]).Seq, "the payer charged once")
	assert.Equal(t, seqs[1]+3, state(t, hs[1]).Seq, "the fill, the room, the credit once")
	assert.Equal(t, seqs[2]+1, state(t, hs[2]).Seq, "the other payee paid once")
	again, err := shortTimeout().Transfer(ctx, tr)
	require.NoError(t, err)
	assert.True(t, again.Complete)
	assert.Equal(t, want[1], cnyOf(t, hs[1]), "the client's retry pays nothing again")
}

// Recovery itself meets a lost answer: the fence of a transfer left
// preparing, or the payer's run after it, ran but its answer never came
// back. The pass leaves the transfer for later; the next aborts it, and the
// stalled driver's run, arriving after, is answered by the fence.
func TestTransfer_OnePayerRecoveryLosesAnAnswer(t *testing.T) {
	needRedis(t)
	for _, c := range []struct {
		name  string
		match func(payer, id string) func([]any) bool
	}{
		{"the fence", func(payer, id string) func([]any) bool {
			return func(a []any) bool { return len(a) > 1 && a[0] == "set" && a[1] == cluster.Tx(payer, id) }
		}},
		{"the payer's run", stepOn},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil)
			b0 := state(t, hs[0])
			tr := payment(hs[0], "4.00", hs[1])
			ids, err := eng.TransferStepIDs(tr, 0)
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, shortTimeout().TransferStep(ctx, tr, "begin", 0))
			time.Sleep(2 * shortTransferTimeout) // past the deadline

			client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
			defer client.Close()
			client.AddHook(loseAnswers{match: c.match(hs[0], ids["commit"]), ran: true})
			broken := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
			_ = engine.NewRecovery(broken, &engine.RecoveryOptions{Logger: quiet}).Recover(ctx)
			st, err := eng.GetTransfer(ctx, tr.ID)
			require.NoError(t, err)
			require.Equal(t, engine.TransferPending, st.Status, "nothing decided on a lost answer")

			st = recoverUntilComplete(t, tr.ID)
			require.Equal(t, engine.TransferAborted, st.Status)
			err = shortTimeout().TransferStep(ctx, tr, "commit", 0) // the stalled driver wakes up
			var e *engine.Error
			require.ErrorAs(t, err, &e)
			assert.True(t, e.Replayed, "the fence answers for the payer's run")
			assert.Equal(t, b0, state(t, hs[0]), "nothing was taken")
		})
	}
}

// A P2P payment whose payee is gone after the payer's run (its hash moved
// away, as an operator's mistake would) is retried for half its window;
// then the payer is given back what it paid, once, and the
// transfer is aborted with the payee's error. The credit, sent again once
// the payee is back, replays the fence: the payee never gets it.
func TestTransfer_OnePayerCreditGivenBackAtTheWindowsEnd(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	// A window of 9.6 s: the give-back falls in its second half, 4.8 s long,
	// however slow the recovery passes of a loaded machine.
	short := func() *engine.Engine {
		return engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout,
			IdempotencyTTL: 50 * shortTransferTimeout, Logger: quiet})
	}
	require.NoError(t, driverSteps(ctx, short(), tr, "begin,commit:0"))
	back := hideHolder(t, hs[1])
	st, err := short().Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status)
	require.False(t, st.Complete)
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available, "charged")

	st = recoverWith(t, short(), tr.ID)
	require.Equal(t, engine.TransferAborted, st.Status)
	require.NotNil(t, st.PartIndex)
	assert.Equal(t, 1, *st.PartIndex)
	require.NotNil(t, st.Error)
	assert.Equal(t, instructions.CodeHolderNotFound, st.Error.Code)
	payer := state(t, hs[0])
	assert.Equal(t, "10.00", payer.Balances["CNY"].Available, "given back")
	assert.Equal(t, int64(3), payer.Seq, "opened, charged, given back: one event each")

	back()
	ids, err := short().TransferStepIDs(tr, 1)
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New(ids["commit"], hs[1]).Credit("CNY", "4.00"))
	assert.Error(t, err, "a client cannot send the engine's own step")
	require.Error(t, short().TransferStep(ctx, tr, "commit", 1), "the credit replays its fence")
	assert.Empty(t, state(t, hs[1]).Balances, "the payee never paid")
	again, err := short().Transfer(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, again.Status)
	assert.True(t, again.Complete)
	assert.Equal(t, "10.00", state(t, hs[0]).Balances["CNY"].Available, "given back once")
}

// forgetRace is a go-redis hook that runs race once, before the first
// transaction that deletes key is sent: between a driver's read of a
// refusal it means to forget and its deletion.
type forgetRace struct {
	key  string
	once *sync.Once
	race func()
}

func (h forgetRace) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h forgetRace) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h forgetRace) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if a := c.Args(); len(a) == 2 && a[0] == "del" && a[1] == h.key {
				h.once.Do(h.race)
			}
		}
		return next(ctx, cmds)
	}
}

// A payee's credit refused OVERFLOW is forgotten so that it can apply once
// room is made. Between one driver's read of the refusal and its deletion,
// another driver forgets it, room is made and its credit applies: the first
// driver's deletion must not remove that credit's record (it would be
// applied again by the next driver), and the payee is paid once.
func TestTransfer_OnePayerForgetTheRefusalRacesAnotherDriver(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil, nil)
	seqs := seqsOf(t, hs)
	tr := payment(hs[0], "4.00", hs[1], hs[2])
	require.NoError(t, driverSteps(ctx, shortTimeout(), tr, "begin,commit:0"))
	full := int64(instructions.MaxUnits - 100)
	apply(t, newIn(hs[1]).Credit("CNY", cny(full)))
	ids, err := eng.TransferStepIDs(tr, 1)
	require.NoError(t, err)
	record := cluster.Tx(hs[1], ids["commit"])

	raced := false
	client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = client.Close() })
	hook := forgetRace{key: record, once: &sync.Once{}, race: func() {
		// (assert, not require: go-redis may call a hook on a goroutine of its own)
		raced = true
		assert.NoError(t, rdb.Del(ctx, record).Err()) // the other driver forgets the refusal
		_, err := eng.Apply(ctx, newIn(hs[1]).Debit("CNY", cny(1000)))
		assert.NoError(t, err, "room is made")
		st, err := shortTimeout().Transfer(ctx, tr) // and its credit applies
		if assert.NoError(t, err) {
			assert.True(t, st.Complete, "the other driver finished it")
		}
	}}
	client.OnNewNode(func(node *redis.Client) { node.AddHook(hook) }) // WATCH runs on the node's client
	first := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
	st, err := first.Transfer(ctx, tr)
	require.NoError(t, err)
	require.True(t, raced, "the refusal was read and about to be forgotten")
	assert.Equal(t, engine.TransferCommitted, st.Status)

	applied, err := rdb.Get(ctx, record).Result()
	require.NoError(t, err, "the applied credit's record is kept")
	assert.NotContains(t, applied, instructions.CodeOverflow)
	for range 2 { // the client's retry, and recovery: nothing applies again
		again, err := shortTimeout().Transfer(ctx, tr)
		require.NoError(t, err)
		assert.True(t, again.Complete)
	}
	recoverUntilComplete(t, tr.ID)
	want := []int64{200, full - 1000 + 400, 400}
	for i, h := range hs {
		assert.Equal(t, want[i], cnyOf(t, h), "holder %d", i)
	}
	assert.Equal(t, seqs[1]+3, state(t, hs[1]).Seq, "the fill, the room, the credit once")
}
