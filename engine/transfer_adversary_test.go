package engine_test

import (
	"context"
	"fmt"
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

// Transfers against an adversary: drivers that interleave, bodies that try
// the rules, holds and payees that change under a transfer. Each test says
// what it tries and checks that no money is made or lost.

// A settle without an amount is checked by whichever driver prepares the
// transfer, not only by the one that began it: a beginner that stops after
// begin (killed, or its answer lost) left the check to the client's retry,
// which settled what balanced the transfer and left the rest of the hold.
// A retry that comes after the part's prepare took from the hold (its
// transfer hold is open) does not check it again.
func TestTransferAdversary_SettleWithoutAnAmountCheckedByEveryDriver(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	cases := []struct {
		name   string
		e      func() *engine.Engine
		held   string // USDT in ord-1
		steps  string // the first driver's, before it stops
		code   error  // nil: committed
		settle instructions.Instruction
	}{
		{"two phases, a leg that holds more", twoPhase, "150", "begin", engine.ErrExceedsHold, ops().SettleLeg("ord-1", "USDT", "")},
		{"two phases, a whole hold that holds more", twoPhase, "150", "begin", engine.ErrExceedsHold, ops().Settle("ord-1")},
		// The retry must replay the prepare: its record lives minutes, not a second.
		{"two phases, the part already prepared", twoPhaseMinutes, "100", "begin,prepare:0", nil, ops().SettleLeg("ord-1", "USDT", "")},
		{"one payer, a leg that holds more", shortTimeout, "150", "begin", engine.ErrExceedsHold, ops().SettleLeg("ord-1", "USDT", "")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("USDT", "1000").Freeze("USDT", c.held, "ord-1", time.Hour)
			}, nil)
			before := []instructions.State{state(t, hs[0]), state(t, hs[1])}
			tr := instructions.Transfer{ID: newID("fill"), Parts: []instructions.Part{
				part(hs[0], c.settle), part(hs[1], ops().Credit("USDT", "100"))}}
			require.NoError(t, driverSteps(ctx, c.e(), tr, c.steps))

			st, err := c.e().Transfer(ctx, tr)
			require.NoError(t, err)
			require.True(t, st.Complete)
			if c.code == nil {
				require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
				assert.NotContains(t, state(t, hs[0]).Holds, "ord-1", "settled whole")
				assert.Equal(t, "100.000000", state(t, hs[1]).Balances["USDT"].Available)
				return
			}
			require.Equal(t, engine.TransferAborted, st.Status, "the hold holds %s, the transfer balances with 100", c.held)
			assert.ErrorIs(t, st.Error, c.code)
			assert.Equal(t, valueOf(before[0]), valueOf(state(t, hs[0])), "nothing settled: the order's hold is whole")
			assert.Equal(t, valueOf(before[1]), valueOf(state(t, hs[1])), "nobody paid")
		})
	}
}

// The same transfer id with a settle that says its amount, a settle of all
// that is left of the leg and a settle of the whole hold: three bodies that
// settle the same units but ask different things of the hold. The print
// kept only the units, so a retry with another of them was taken for the
// first and went on with its check; it is IDEMPOTENCY_CONFLICT, as any other
// body under the id.
func TestTransferAdversary_SettleWithAndWithoutAnAmountAreOtherBodies(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	settles := []instructions.Instruction{ops().SettleLeg("ord-1", "USDT", ""), ops().Settle("ord-1"), ops().SettleLeg("ord-1", "USDT", "100")}
	for i, first := range settles {
		for j, then := range settles {
			if i == j {
				continue
			}
			hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("USDT", "1000").Freeze("USDT", "150", "ord-1", time.Hour)
			}, nil)
			id := newID("fill")
			body := func(s instructions.Instruction) instructions.Transfer {
				return instructions.Transfer{ID: id, Parts: []instructions.Part{part(hs[0], s), part(hs[1], ops().Credit("USDT", "100"))}}
			}
			require.NoError(t, shortTimeout().TransferStep(ctx, body(first), "begin", 0))
			_, err := shortTimeout().Transfer(ctx, body(then))
			assert.ErrorIs(t, err, engine.ErrIdempotencyConflict, "settle %d, then settle %d", i, j)
			assert.Equal(t, "850.000000", state(t, hs[0]).Balances["USDT"].Available, "nothing settled")
			assert.Empty(t, state(t, hs[1]).Balances, "nobody paid")
		}
	}
}

// stall is a go-redis hook that holds the first pipeline holding a command
// match accepts, before it is sent (or, after, its answer), until release
// is closed; hit is closed when it holds it.
type stall struct {
	match        func(args []any) bool
	after        bool
	once         *sync.Once
	hit, release chan struct{}
}

func newStall(match func([]any) bool, after bool) stall {
	return stall{match: match, after: after, once: new(sync.Once), hit: make(chan struct{}), release: make(chan struct{})}
}

func (h stall) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h stall) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h stall) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		held := false
		for _, c := range cmds {
			if h.match(c.Args()) {
				h.once.Do(func() { held = true })
			}
		}
		if held && !h.after {
			close(h.hit)
			<-h.release
		}
		err := next(ctx, cmds)
		if held && h.after {
			close(h.hit)
			<-h.release
		}
		return err
	}
}

// A driver of a payment held at each of its four round trips, before its
// command is sent or after it ran with the answer held back, while a second
// driver (the client's call sent again, or recovery past the deadline) takes
// the transfer to its end; then the first goes on. Both answer the outcome
// the record has, and each part applies once: the payer charged once, each
// payee paid once, or nothing anywhere.
func TestTransferAdversary_SecondDriverWhileTheFirstIsHeld(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	points := []struct {
		name  string
		match func(hs []string, commit string) func([]any) bool
	}{
		{"begin", func([]string, string) func([]any) bool { return transferAction("begin") }},
		{"the payer's run", func(hs []string, c string) func([]any) bool { return stepOn(hs[0], c) }},
		{"the credits", func(hs []string, c string) func([]any) bool { return stepOn(hs[1], c) }},
		{"the decision", func([]string, string) func([]any) bool { return transferAction("decide") }},
	}
	for _, p := range points {
		for _, after := range []bool{false, true} {
			for _, second := range []string{"retry", "recovery"} {
				if second == "recovery" && p.name == "begin" && !after {
					continue // no record for recovery to find
				}
				name := fmt.Sprintf("%s, held before it is sent; %s", p.name, second)
				if after {
					name = fmt.Sprintf("%s, its answer held; %s", p.name, second)
				}
				t.Run(name, func(t *testing.T) {
					hs := holdersOnMasters(t, tenCNY, nil, nil)
					before, seqs := totals(t, hs...), seqsOf(t, hs)
					tr := payment(hs[0], "4.00", hs[1], hs[2])
					ids, err := eng.TransferStepIDs(tr, 0)
					require.NoError(t, err)
					client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
					defer client.Close()
					h := newStall(p.match(hs, ids["commit"]), after)
					client.AddHook(h)
					first := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})

					type answer struct {
						st  engine.TransferState
						err error
					}
					done := make(chan answer, 1)
					go func() {
						st, err := first.Transfer(ctx, tr)
						done <- answer{st, err}
					}()
					select {
					case <-h.hit:
					case <-time.After(60 * time.Second):
						t.Fatal("the first driver never reached the step")
					}
					var st engine.TransferState
					if second == "retry" {
						st, err = shortTimeout().Transfer(ctx, tr)
						require.NoError(t, err)
					} else {
						time.Sleep(2 * shortTransferTimeout) // past the deadline
						st = recoverUntilComplete(t, tr.ID)
					}
					require.True(t, st.Complete)
					close(h.release)
					a := <-done
					require.NoError(t, a.err)
					assert.Equal(t, st.Status, a.st.Status, "both drivers answer the same")
					assert.True(t, a.st.Complete)
					final, err := eng.GetTransfer(ctx, tr.ID)
					require.NoError(t, err)
					assert.Equal(t, st.Status, final.Status)
					paymentEnded(t, final.Status, hs, before, seqs)
				})
			}
		}
	}
}

// The order's hold changes after the driver read it (the check of a settle
// without an amount) and before the part takes from it: settled in part or
// released, in part or whole, by an instruction of the holder's. A hold only
// shrinks, so the part's run is refused and the transfer aborts with every
// holder's value as it was (the holder's own instruction aside), on both
// paths; nothing is left half-settled.
func TestTransferAdversary_HoldChangesBetweenTheReadAndTheSettle(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	changes := []struct {
		name   string
		change func(h string) instructions.Instruction
		code   error
	}{
		{"settled in part", func(h string) instructions.Instruction { return newIn(h).SettleLeg("ord-1", "USDT", "1") }, engine.ErrExceedsHold},
		{"released in part", func(h string) instructions.Instruction { return newIn(h).ReleaseLeg("ord-1", "USDT", "1") }, engine.ErrExceedsHold},
		{"released", func(h string) instructions.Instruction { return newIn(h).Release("ord-1") }, engine.ErrHoldNotFound},
	}
	paths := []struct {
		name string
		step string // the part's run that takes from the hold
	}{{"one payer", "commit"}, {"two phases", "prepare"}}
	for _, path := range paths {
		for _, c := range changes {
			t.Run(path.name+", "+c.name, func(t *testing.T) {
				hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
					return in.Credit("USDT", "1000").Freeze("USDT", "100", "ord-1", time.Hour)
				}, nil)
				tr := instructions.Transfer{ID: newID("fill"), Parts: []instructions.Part{
					part(hs[0], ops().SettleLeg("ord-1", "USDT", "")), part(hs[1], ops().Credit("USDT", "100"))}}
				opts := &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet}
				if path.step == "prepare" {
					opts.IdempotencyTTL = time.Second // too short for the one-payer path
				}
				ids, err := engine.New(rdb, opts).TransferStepIDs(tr, 0)
				require.NoError(t, err)
				client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
				defer client.Close()
				h := newStall(stepOn(hs[0], ids[path.step]), false)
				client.AddHook(h)
				driver := engine.New(client, opts)

				// The payee's value before anything runs: on the two phases its
				// prepare (a marker hold) may apply while the payer's waits.
				payee := state(t, hs[1])
				done := make(chan engine.TransferState, 1)
				go func() {
					st, err := driver.Transfer(ctx, tr)
					assert.NoError(t, err)
					done <- st
				}()
				select {
				case <-h.hit:
				case <-time.After(60 * time.Second):
					t.Fatal("the driver never reached the part's run")
				}
				apply(t, c.change(hs[0]))
				before := state(t, hs[0])
				close(h.release)
				st := <-done
				require.True(t, st.Complete)
				require.Equal(t, engine.TransferAborted, st.Status)
				assert.ErrorIs(t, st.Error, c.code)
				require.NotNil(t, st.PartIndex)
				assert.Equal(t, 0, *st.PartIndex)
				assert.Equal(t, valueOf(before), valueOf(state(t, hs[0])), "the order's hold as the instruction left it")
				assert.Equal(t, valueOf(payee), valueOf(state(t, hs[1])), "nobody paid")
			})
		}
	}
}

// A payee suspended, or its hash gone (an operator's mistake, a holder
// being rebuilt), after the payer's run and before its credit. The
// suspended one is paid (a suspended holder accepts credits). The gone
// one's credit is refused HOLDER_NOT_FOUND: the transfer stays committed and
// incomplete, counted stuck, the payer charged once; once the hash is back,
// the holder is paid once by recovery.
func TestTransferAdversary_PayeeChangesBeforeItsCredit(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	t.Run("suspended", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil, nil)
		before, seqs := totals(t, hs...), seqsOf(t, hs)
		tr := payment(hs[0], "4.00", hs[1], hs[2])
		require.NoError(t, driverSteps(ctx, shortTimeout(), tr, "begin,commit:0"))
		apply(t, newIn(hs[1]).Suspend())
		seqs[1]++
		st, err := shortTimeout().Transfer(ctx, tr)
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status)
		assert.True(t, st.Complete)
		paidOnce(t, hs, before, seqs)
	})
	t.Run("gone", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil)
		tr := payment(hs[0], "4.00", hs[1])
		require.NoError(t, driverSteps(ctx, shortTimeout(), tr, "begin,commit:0"))
		back := hideHolder(t, hs[1])
		st, err := shortTimeout().Transfer(ctx, tr)
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status, "the payer's run was the commit point")
		assert.False(t, st.Complete)
		forgetOnCleanup(t, tr.ID)
		time.Sleep(2 * shortTransferTimeout)
		parts, recs := recoverStuck(t, tr.ID)
		assert.Equal(t, 1, parts, "left unfinished, and counted")
		require.Len(t, recs, 1)
		assert.Contains(t, recs[0].msg, "a payee's credit found no holder", "logged as what it is")
		assert.NotContains(t, recs[0].msg, "failover", "not as a prepare lost")
		assert.EqualValues(t, 1, recs[0].attrs["part"])
		assert.Equal(t, hs[1], recs[0].attrs["holder"])
		assert.Equal(t, "x:"+tr.ID+":c", recs[0].attrs["instruction"], "the commit's id, to look up in the ledger")

		back()
		st = recoverUntilComplete(t, tr.ID)
		assert.Equal(t, engine.TransferCommitted, st.Status)
		assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available, "the payer charged once")
		assert.Equal(t, "4.00", state(t, hs[1]).Balances["CNY"].Available, "the payee paid once")
		again, err := shortTimeout().Transfer(ctx, tr)
		require.NoError(t, err)
		assert.True(t, again.Complete)
		assert.Equal(t, "4.00", state(t, hs[1]).Balances["CNY"].Available, "the retry pays nothing again")
	})
}

// Transfer ids that try the engine's own names: one of 60 bytes (its steps'
// ids are 64, the most an id may be) and ids that end as another's step ids
// do ("q", "q:c", "q:c:c": the commit of "q" is x:q:c, the hold of "q:c"),
// each paid on the same holders, on both paths. Each is its own transfer:
// none replays another's step, every payee paid by each once.
func TestTransferAdversary_IDsThatLookLikeStepIDs(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	for _, path := range []struct {
		name string
		e    func() *engine.Engine
	}{{"one payer", shortTimeout}, {"two phases", twoPhase}} {
		t.Run(path.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil)
			q := newID("q")
			ids := []string{q, q + ":c", q + ":c:c", q + ":p", strings.Repeat("9", 60-len(q)) + q}
			for _, id := range ids {
				st, err := path.e().Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
					part(hs[0], ops().Debit("CNY", "1.00")), part(hs[1], ops().Credit("CNY", "1.00"))}})
				require.NoError(t, err, id)
				require.Equal(t, engine.TransferCommitted, st.Status, "%s: %v", id, st.Error)
				assert.True(t, st.Complete, id)
			}
			assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "charged once by each")
			assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once by each")
			assert.Empty(t, state(t, hs[0]).Holds)
			assert.Empty(t, state(t, hs[1]).Holds)
		})
	}
}

// A payer that does not exist yet: its run is refused HOLDER_NOT_FOUND,
// which no record keeps (nothing is written for an unknown holder), and the
// transfer is decided aborted. A second driver that read the record while
// it was preparing sends the payer's run after the holder has been opened
// and funded: without a fence the run applied, the payer was charged and the
// payee paid under a transfer that says aborted. The decision's driver fences
// the step first, so the late run is answered by the fence.
func TestTransferAdversary_PayerOpenedAfterItsRunWasRefused(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	payer := newID("h")
	hs := holdersOnMasters(t, nil)
	tr := payment(payer, "4.00", hs[0])
	ids, err := eng.TransferStepIDs(tr, 0)
	require.NoError(t, err)
	client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	defer client.Close()
	h := newStall(stepOn(payer, ids["commit"]), false)
	client.AddHook(h)
	held := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})

	done := make(chan engine.TransferState, 1)
	go func() {
		st, err := held.Transfer(ctx, tr)
		assert.NoError(t, err)
		done <- st
	}()
	select {
	case <-h.hit:
	case <-time.After(60 * time.Second):
		t.Fatal("the driver never reached the payer's run")
	}
	st, err := shortTimeout().Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.ErrorIs(t, st.Error, engine.ErrHolderNotFound)
	assert.True(t, st.Complete)

	apply(t, instructions.New(newID("open"), payer).Open().Credit("CNY", "10.00"))
	t.Cleanup(func() { checkInvariants(t, payer) })
	close(h.release)
	late := <-done
	assert.Equal(t, engine.TransferAborted, late.Status, "the late driver answers the record's decision")
	assert.Equal(t, "10.00", state(t, payer).Balances["CNY"].Available, "the payer of an aborted transfer is not charged")
	assert.Empty(t, state(t, hs[0]).Balances, "nor its payee paid")
	assert.Empty(t, eventsOf(t, payer, tr.ID))
}

// The record lost (a failover without a replica that had it) between begin
// and the decision: the decision finds no record. The driver answered a
// state with no status at all; it answers pending, as when the decision's
// answer is lost, and the client's call sent again takes the transfer to its
// end, each part once.
func TestTransferAdversary_RecordLostBeforeTheDecision(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// Two phases: a TTL under ten transfer timeouts (too short for one
	// payer), yet of minutes: the retry's prepares replay the first
	// driver's however long the machine takes between them.
	for _, path := range []struct {
		name         string
		ttl, timeout time.Duration
	}{{"one payer", 0, shortTransferTimeout}, {"two phases", 5 * time.Minute, time.Minute}} {
		t.Run(path.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil, nil)
			before := totals(t, hs...)
			tr := payment(hs[0], "4.00", hs[1], hs[2])
			client := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
			defer client.Close()
			h := newStall(transferAction("decide"), false)
			client.AddHook(h)
			opts := &engine.Options{TransferTimeout: path.timeout, IdempotencyTTL: path.ttl, Logger: quiet}
			driver := engine.New(client, opts)
			done := make(chan engine.TransferState, 1)
			go func() {
				st, err := driver.Transfer(ctx, tr)
				assert.NoError(t, err)
				done <- st
			}()
			select {
			case <-h.hit:
			case <-time.After(60 * time.Second):
				t.Fatal("the driver never reached the decision")
			}
			require.NoError(t, rdb.Del(ctx, cluster.Transfer(tr.ID)).Err())
			close(h.release)
			st := <-done
			if path.ttl == 0 {
				// One payer: every part applied before the booking, which
				// writes the claim again with the decision, so that another
				// body under the id is a conflict, not a payment begun anew.
				assert.Equal(t, engine.TransferCommitted, st.Status)
				assert.True(t, st.Complete)
				driver.Flush()
				got, err := eng.GetTransfer(ctx, tr.ID)
				require.NoError(t, err)
				assert.Equal(t, st.Status, got.Status)
				assert.True(t, got.Complete)
				assert.Equal(t, hs, got.Holders)
				other := payment(hs[0], "1.00", hs[1], hs[2])
				other.ID = tr.ID
				_, err = engine.New(rdb, opts).Transfer(ctx, other)
				assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
			} else {
				assert.Equal(t, engine.TransferPending, st.Status)
				assert.False(t, st.Complete)
			}

			again, err := engine.New(rdb, opts).Transfer(ctx, tr)
			require.NoError(t, err)
			require.Equal(t, engine.TransferCommitted, again.Status, "%v", again.Error)
			assert.True(t, again.Complete)
			assert.Equal(t, before, totals(t, hs...), "money is conserved")
			for i, want := range []string{"2.00", "4.00", "4.00"} {
				assert.Equal(t, want, state(t, hs[i]).Balances["CNY"].Available, "holder %d: once", i)
			}
		})
	}
}

// The most parts a transfer may have, sixteen: one payer and fifteen payees,
// each paid once; and with the last payee missing, aborted before anyone is
// charged, naming that part.
func TestTransferAdversary_SixteenParts(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	for _, missing := range []bool{false, true} {
		t.Run(fmt.Sprintf("last payee missing: %v", missing), func(t *testing.T) {
			hs := holdersOnMasters(t, append([]func(instructions.Instruction) instructions.Instruction{tenCNY},
				make([]func(instructions.Instruction) instructions.Instruction, 14)...)...)
			hs = append(hs, newID("h"))
			if !missing {
				apply(t, instructions.New(newID("open"), hs[15]).Open())
				t.Cleanup(func() { checkInvariants(t, hs[15]) })
			}
			seqs := seqsOf(t, hs[:15])
			st, err := shortTimeout().Transfer(ctx, payment(hs[0], "0.50", hs[1:]...))
			require.NoError(t, err)
			assert.True(t, st.Complete)
			if missing {
				require.Equal(t, engine.TransferAborted, st.Status)
				assert.ErrorIs(t, st.Error, engine.ErrHolderNotFound)
				require.NotNil(t, st.PartIndex)
				assert.Equal(t, 15, *st.PartIndex)
				assert.Equal(t, seqs, seqsOf(t, hs[:15]), "nothing applied anywhere")
				return
			}
			require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
			assert.Equal(t, "2.50", state(t, hs[0]).Balances["CNY"].Available)
			for i, h := range hs[1:] {
				s := state(t, h)
				assert.Equal(t, "0.50", s.Balances["CNY"].Available, "payee %d", i+1)
				if i < 14 {
					assert.Equal(t, seqs[i+1]+1, s.Seq, "payee %d paid once", i+1)
				}
			}
		})
	}
}

// A payee whose hash was replaced by a key of another type after the
// payer's run: its credit fails with Redis's WRONGTYPE, which no retry
// cures. The part is left unfinished, logged at ERROR and counted stuck by
// recovery (not retried in silence); once the holder is repaired it
// applies once.
func TestTransferAdversary_PayeeKeyOfAnotherType(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	require.NoError(t, driverSteps(ctx, shortTimeout(), tr, "begin,commit:0"))
	key := cluster.Holder(hs[1])
	saved, err := rdb.Dump(ctx, key).Result()
	require.NoError(t, err)
	require.NoError(t, rdb.Del(ctx, key).Err())
	require.NoError(t, rdb.Set(ctx, key, "not a hash", 0).Err())
	st, err := shortTimeout().Transfer(ctx, tr)
	require.NoError(t, err)
	assert.False(t, st.Complete, "%s: the payee's read is refused too", st.Status)
	time.Sleep(2 * shortTransferTimeout)
	parts, recs := recoverStuck(t, tr.ID)
	assert.Equal(t, 1, parts, "counted stuck")
	require.NotEmpty(t, recs)
	assert.Contains(t, recs[0].msg, "will not cure")

	require.NoError(t, rdb.Del(ctx, key).Err())
	require.NoError(t, rdb.Restore(ctx, key, 0, saved).Err())
	st = recoverUntilComplete(t, tr.ID)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available, "the payer charged once")
	assert.Equal(t, "4.00", state(t, hs[1]).Balances["CNY"].Available, "the payee paid once")
}
