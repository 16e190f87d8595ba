package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// Retries that outlive their id: each test sends an id again after
// something has happened to what Redis remembers of it, and checks that no
// money moves twice.

// swap is a two-phase transfer (both parts pay): a gives 1.00 CNY for 1.00
// USD of b.
func swap(a, b string) instructions.Transfer {
	return instructions.Transfer{ID: newID("swap"), Parts: []instructions.Part{
		part(a, ops().Debit("CNY", "1.00").Credit("USD", "1.00")),
		part(b, ops().Debit("USD", "1.00").Credit("CNY", "1.00")),
	}}
}

func tenCNYAndUSD(in instructions.Instruction) instructions.Instruction {
	return in.Credit("CNY", "10.00").Credit("USD", "10.00")
}

// A two-phase transfer begun by an engine with the default TTL and driven
// by one whose TTL is a second (engines of two configurations sharing a
// cluster): every step's record, the fences and the done record live as
// long as the beginner's TTL, which the record tells every driver. Driven
// with its own TTL, the short engine let the done record and its own steps'
// records expire within a second while the beginner's prepare stayed
// remembered: the client's retry within its TTL then began the transfer
// anew, the beginner's prepare replayed, the short engine's ran again, and
// one holder paid and was paid a second time (money made: the other part's
// commit found no hold and stuck); and a stalled driver's prepare, arriving
// after the short engine's fence had expired, reserved funds under an
// aborted transfer for good.
func TestIdempotencyAdversary_TwoPhaseTransferLivesForItsBeginnersTTL(t *testing.T) {
	needRedis(t)
	long, short, ctx := shortTimeout(), twoPhase(), context.Background()
	past := func() { time.Sleep(2 * time.Second) } // past the short engine's TTL

	t.Run("the short engine finishes it; the client's retry replays", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNYAndUSD, tenCNYAndUSD)
		before, seqs := totals(t, hs...), seqsOf(t, hs)
		tr := swap(hs[0], hs[1])
		require.NoError(t, driverSteps(ctx, long, tr, "begin,prepare:0"))
		st, err := short.Transfer(ctx, tr)
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
		require.True(t, st.Complete)
		past()
		again, err := long.Transfer(ctx, tr)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferCommitted, again.Status)
		assert.True(t, again.Complete, "no part is left stuck")
		assert.True(t, again.Replayed, "the record is still there")
		assert.Equal(t, before, totals(t, hs...), "money is conserved")
		pays, gets := []string{"CNY", "USD"}, []string{"USD", "CNY"}
		for i, h := range hs {
			s := state(t, h)
			assert.Equal(t, seqs[i]+2, s.Seq, "holder %d: one prepare and one commit", i)
			assert.Equal(t, "9.00", s.Balances[pays[i]].Available, "holder %d paid once", i)
			assert.Equal(t, "11.00", s.Balances[gets[i]].Available, "holder %d paid to once", i)
			assert.Empty(t, s.Holds)
		}
	})

	t.Run("the short engine's recovery aborts it; the stalled driver's prepare arrives later", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNYAndUSD, tenCNYAndUSD)
		b0 := state(t, hs[0])
		tr := swap(hs[0], hs[1])
		require.NoError(t, long.TransferStep(ctx, tr, "begin", 0))
		st := recoverWith(t, short, tr.ID)
		require.Equal(t, engine.TransferAborted, st.Status)
		past()
		err := long.TransferStep(ctx, tr, "prepare", 0)
		var e *engine.Error
		require.ErrorAs(t, err, &e, "the fence answers for the prepare")
		assert.True(t, e.Replayed)
		assert.Equal(t, b0, state(t, hs[0]), "nothing was reserved")
		got, err := long.GetTransfer(ctx, tr.ID)
		require.NoError(t, err, "the record is still there")
		assert.Equal(t, engine.TransferAborted, got.Status)
	})
}

// decode is an instruction as the daemon reads it from JSON.
func decode(t *testing.T, body string) instructions.Instruction {
	t.Helper()
	in, err := instructions.Decode([]byte(body))
	require.NoError(t, err, body)
	return in
}

// The same id with every kind of other content: the body is compared in
// its normalized form (amounts in minor units, the default counterparty
// filled in, an empty memo as none), so a spelling replays the first
// answer, applied or rejected, and any other content is
// IDEMPOTENCY_CONFLICT; either way the holder's hash, events and expiry
// entries stay as they were.
func TestIdempotencyAdversary_SameIDEveryKindOfBody(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Credit("USD", "10.00").EarnPoints("10")
	})
	body := func(id, fields, ops string) string {
		return `{"id": "` + id + `", "holder": "` + h + `"` + fields + `, "ops": [` + ops + `]}`
	}
	const debit, earn = `{"op": "debit", "asset": "CNY", "amount": "1.00"}`, `{"op": "earn_points", "amount": "5"}`
	big := `{"op": "debit", "asset": "CNY", "amount": "1000.00"}`
	for _, first := range []struct {
		name, fields, ops string
		rejected          bool
		same, other       []struct{ fields, ops string }
	}{
		{name: "applied", fields: "", ops: debit + "," + earn,
			same: []struct{ fields, ops string }{
				{"", `{"op": "debit", "asset": "CNY", "amount": "1.0"}, ` + earn},
				{"", `{"op": "debit", "asset": "CNY", "amount": "01"}, {"op": "earn_points", "amount": "005"}`},
				{`, "memo": ""`, debit + "," + earn},
				{`, "counterparty": "external"`, debit + "," + earn},
				{`, "counterparty": "external", "memo": ""`, debit + "," + earn},
			},
			other: []struct{ fields, ops string }{
				{"", `{"op": "debit", "asset": "CNY", "amount": "1.01"}, ` + earn},
				{"", `{"op": "debit", "asset": "USD", "amount": "1.00"}, ` + earn},
				{"", earn + "," + debit},
				{"", debit},
				{"", debit + "," + earn + "," + earn},
				{"", debit + `, {"op": "earn_points", "amount": "6"}`},
				{"", `{"op": "credit", "asset": "CNY", "amount": "1.00"}, ` + earn},
				{`, "memo": " "`, debit + "," + earn},
				{`, "counterparty": "shop"`, debit + "," + earn},
			}},
		{name: "rejected", fields: `, "memo": "too much"`, ops: big, rejected: true,
			same: []struct{ fields, ops string }{
				{`, "memo": "too much"`, `{"op": "debit", "asset": "CNY", "amount": "1000.0"}`},
				{`, "memo": "too much", "counterparty": "external"`, big},
			},
			other: []struct{ fields, ops string }{
				{``, big},
				{`, "memo": "too much"`, `{"op": "debit", "asset": "CNY", "amount": "1.00"}`},
				{`, "memo": "too much"`, `{"op": "debit", "asset": "CNY", "amount": "1000.01"}`},
			}},
	} {
		t.Run("the first "+first.name, func(t *testing.T) {
			id := newID("same")
			res, firstErr := eng.Apply(context.Background(), decode(t, body(id, first.fields, first.ops)))
			require.Equal(t, first.rejected, firstErr != nil, "%v", firstErr)
			before := readRaw(t, h)
			for _, v := range first.same {
				got, err := eng.Apply(context.Background(), decode(t, body(id, v.fields, v.ops)))
				if first.rejected {
					var e *engine.Error
					require.ErrorAs(t, err, &e, "%s%s", v.fields, v.ops)
					assert.True(t, e.Replayed, "%s%s: the rejection replays", v.fields, v.ops)
					assert.Equal(t, firstErr.Error()+engine.ReplayNote, err.Error())
				} else {
					require.NoError(t, err, "%s%s", v.fields, v.ops)
					assert.True(t, got.Replayed, "%s%s", v.fields, v.ops)
					got.Replayed = false
					assert.Equal(t, res, got, "%s%s: the first answer", v.fields, v.ops)
				}
				assert.Equal(t, before, readRaw(t, h), "%s%s changed the holder", v.fields, v.ops)
			}
			for _, v := range first.other {
				_, err := eng.Apply(context.Background(), decode(t, body(id, v.fields, v.ops)))
				var e *engine.Error
				require.ErrorAs(t, err, &e, "%s%s", v.fields, v.ops)
				assert.Equal(t, instructions.CodeIdempotencyConflict, e.Code, "%s%s", v.fields, v.ops)
				assert.Equal(t, instructions.NoOp, e.OpIndex)
				assert.Equal(t, before, readRaw(t, h), "%s%s changed the holder", v.fields, v.ops)
			}
		})
	}
}

// Many calls of one id at once, half of them with another body, through
// Apply (which groups concurrent calls into shared pipelines) and within
// one batch: exactly one applies; every other call of its body replays its
// answer, every call of the other body is IDEMPOTENCY_CONFLICT. Never both.
func TestIdempotencyAdversary_OneIDSentManyTimesAtOnce(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	ctx := context.Background()
	bodies := func(id string) [2]instructions.Instruction {
		return [2]instructions.Instruction{
			instructions.New(id, h).Debit("CNY", "1.00"),
			instructions.New(id, h).Debit("CNY", "2.00"),
		}
	}
	// check takes the outcomes of calls of bodies[which[i]] and gives the
	// index of the body that applied.
	check := func(t *testing.T, out []engine.Outcome, which []int) int {
		t.Helper()
		winner, seq := -1, int64(0)
		for i, o := range out {
			if o.Err == nil && !o.Result.Replayed {
				require.Equal(t, -1, winner, "two calls of one id applied")
				winner, seq = which[i], o.Result.Seq
			}
		}
		require.NotEqual(t, -1, winner, "no call applied")
		for i, o := range out {
			if which[i] == winner {
				require.NoError(t, o.Err)
				assert.Equal(t, seq, o.Result.Seq, "a replay answers the first seq")
			} else {
				assert.ErrorIs(t, o.Err, engine.ErrIdempotencyConflict)
			}
		}
		return winner
	}
	want := int64(10000)
	for round := range 10 {
		b := bodies(newID("many"))
		const n = 16
		out, which := make([]engine.Outcome, n), make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			which[i] = i % 2
			wg.Go(func() { out[i].Result, out[i].Err = eng.Apply(ctx, b[which[i]]) })
		}
		wg.Wait()
		want -= []int64{100, 200}[check(t, out, which)]
		assert.Equal(t, want, cnyUnits(t, h), "round %d: one debit", round)
	}
	t.Run("within one batch", func(t *testing.T) {
		b := bodies(newID("batch"))
		which := []int{0, 1, 0, 1, 0}
		var batch []instructions.Instruction
		for _, w := range which {
			batch = append(batch, b[w])
		}
		winner := check(t, eng.ApplyBatch(ctx, batch), which)
		assert.Zero(t, winner, "the batch's first entry applies, in order")
		want -= 100
		assert.Equal(t, want, cnyUnits(t, h))
	})
}

// cnyUnits is holder's available CNY in minor units.
func cnyUnits(t *testing.T, holder string) int64 {
	t.Helper()
	n, ok := instructions.ToUnits(state(t, holder).Balances["CNY"].Available, 2)
	require.True(t, ok)
	return n
}

// An id shared by a batch's entry and a single call is one instruction:
// whichever came first answers the other, applied or rejected; a batch
// retried whole after it was cut short (some entries applied, others never
// sent) applies the others and replays the rest.
func TestIdempotencyAdversary_BatchAndSingleCallShareIDs(t *testing.T) {
	needRedis(t)
	h := newHolder(t, tenCNY)
	ctx := context.Background()
	pay, big, late := newIn(h).Debit("CNY", "1.00"), newIn(h).Debit("CNY", "100.00"), newIn(h).Debit("CNY", "2.00")

	first, err := eng.Apply(ctx, pay)
	require.NoError(t, err)
	_, bigErr := eng.Apply(ctx, big)
	require.ErrorIs(t, bigErr, engine.ErrInsufficientFunds)
	// The batch retried whole: pay and big were sent before, late was not.
	out := eng.ApplyBatch(ctx, []instructions.Instruction{pay, big, late})
	require.NoError(t, out[0].Err)
	assert.True(t, out[0].Result.Replayed)
	out[0].Result.Replayed = false
	assert.Equal(t, first, out[0].Result)
	var e *engine.Error
	require.ErrorAs(t, out[1].Err, &e)
	assert.True(t, e.Replayed, "a recorded rejection replays")
	assert.Equal(t, bigErr.Error()+engine.ReplayNote, out[1].Err.Error())
	require.NoError(t, out[2].Err)
	assert.False(t, out[2].Result.Replayed, "never sent before: it applies")
	before := readRaw(t, h)

	// Then the single call of late answers the batch's entry.
	again, err := eng.Apply(ctx, late)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	again.Replayed = false
	assert.Equal(t, out[2].Result, again)
	other := late
	other.Ops = []instructions.Op{{Op: "debit", Asset: "CNY", Amount: "2.01"}}
	_, err = eng.Apply(ctx, other)
	assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	assert.Equal(t, before, readRaw(t, h))
	assert.Equal(t, int64(700), cnyUnits(t, h), "10.00 less 1.00 and 2.00, each once")
}

// A call cut short after it was sent (its context cancelled, or past its
// deadline, while the shard holds it) is answered UNAVAILABLE: its outcome
// is unknown. The same id sent again gets the truth and applies it once:
// the first call's answer, replayed, when the pipeline that carried it went
// on (a cancelled caller without a deadline leaves it to run), or a first
// application when the shard dropped it with its connection (a deadline
// ends the pipeline's read, and go-redis closes the connection).
func TestIdempotencyAdversary_CallAnsweredUnavailableRetriesToTheTruth(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// cutWhileHeld sends a debit to a fresh holder whose shard holds every
	// write, and cuts it short: cancelled once the shard holds it, or by
	// a deadline of wait. It reports false when the deadline passed before
	// the call reached the shard (a busy machine): nothing was held, and
	// the shard runs again.
	cutWhileHeld := func(t *testing.T, deadline bool, wait time.Duration) bool {
		h := newHolder(t, tenCNY)
		seq := state(t, h).Seq
		master, err := rdb.MasterForKey(ctx, cluster.Holder(h))
		require.NoError(t, err)
		// The shard holds every write until it is unpaused.
		require.NoError(t, master.Do(ctx, "client", "pause", "600000", "write").Err())
		t.Cleanup(func() { _ = master.Do(ctx, "client", "unpause").Err() })
		in := newIn(h).Debit("CNY", "1.00")
		cut, cancel := context.WithCancel(ctx)
		if deadline {
			cut, cancel = context.WithTimeout(ctx, wait)
		}
		defer cancel()
		answered := make(chan error, 1)
		go func() { _, err := eng.Apply(cut, in); answered <- err }()
		held := false
		for until := time.Now().Add(2 * time.Minute); len(answered) == 0 && !held; time.Sleep(5 * time.Millisecond) {
			require.True(t, time.Now().Before(until), "the call never reached the shard")
			held = heldCall(t, master)
		}
		if !deadline {
			cancel() // only once the shard holds the call: it was sent
		}
		err = <-answered
		assert.ErrorIs(t, err, engine.ErrUnavailable, "the outcome is unknown")
		if !held {
			require.NoError(t, master.Do(ctx, "client", "unpause").Err())
			return false
		}
		if deadline {
			// The pipeline's read ends at the same deadline as the caller's
			// wait; once its connection is closed the shard drops the call.
			for until := time.Now().Add(2 * time.Minute); heldCall(t, master); time.Sleep(5 * time.Millisecond) {
				require.True(t, time.Now().Before(until), "the shard still holds the call two minutes past its deadline")
			}
		}
		require.NoError(t, master.Do(ctx, "client", "unpause").Err())

		res, err := eng.Apply(ctx, in)
		require.NoError(t, err)
		if deadline {
			assert.False(t, res.Replayed, "the shard dropped the call with its connection: the retry is its first application")
		} else {
			assert.True(t, res.Replayed, "the first call ran: the retry replays it")
		}
		assert.Equal(t, seq+1, res.Seq)
		assert.Equal(t, "9.00", res.Balances["CNY"].Available)
		assert.Equal(t, int64(900), cnyUnits(t, h), "applied once")
		assert.Equal(t, seq+1, state(t, h).Seq)
		o, err := eng.Outcome(ctx, h, in.ID)
		require.NoError(t, err)
		assert.Equal(t, res.Seq, o.Result.Seq, "the outcome read tells the same")
		return true
	}
	t.Run("cancelled", func(t *testing.T) {
		require.True(t, cutWhileHeld(t, false, 0))
	})
	t.Run("past its deadline", func(t *testing.T) {
		// A deadline the call outlives at the shard whatever the machine's
		// speed: doubled each time it passed before the call got there.
		for wait := time.Second; !cutWhileHeld(t, true, wait); wait *= 2 {
			require.Less(t, wait, 2*time.Minute, "the call never reached the shard within its deadline")
			t.Logf("the deadline of %v passed before the call reached the shard: again with %v", wait, 2*wait)
		}
	})
}

// heldCall tells whether a client of node waits, paused, in an FCALL.
func heldCall(t *testing.T, node *redis.Client) bool {
	n, err := clustertest.HeldCalls(context.Background(), node)
	require.NoError(t, err)
	return n > 0
}
