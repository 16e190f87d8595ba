package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// RecoveryOptions configure a Recovery. A nil *RecoveryOptions or a zero
// field means the default.
type RecoveryOptions struct {
	// Interval between two passes. Default 1s.
	Interval time.Duration
	// Limit is the most transfers one pass takes from one slot. Default 256.
	Limit int
	// Logger receives failed passes. Default slog.Default().
	Logger *slog.Logger
	// Resync is the longest Run goes between two reads of every slot's
	// index of transfers: between them it reads only the slots whose
	// transfers fall due or that a change notice names, a safety net beside
	// the notices. Default 5m.
	Resync time.Duration
}

// RecoveryStats are a recovery worker's counters, for metrics.
type RecoveryStats struct {
	Passes   int64 // completed passes
	Aborted  int64 // transfers aborted for want of a decision within the timeout
	Finished int64 // transfers whose parts it finished (committed or aborted)
	Errors   int64 // transfers or passes that failed, retried later
	// Stuck counts, per pass, the committed parts whose commit found no
	// transfer hold to consume: applied before (and its id forgotten since)
	// or prepared on a master that lost it. They stay unfinished for an
	// operator (docs/transfers.md, "Exactly once"); the recovery worker
	// never sends a part again on that ground.
	Stuck int64
}

// Recovery finishes the transfers their drivers left: a transfer still
// undecided past its deadline is aborted, and a decided one whose parts are
// not all finished after the engine's TransferTimeout is finished. It finds
// them in the per-slot index of unfinished transfers (cluster.Transfers),
// never by SCAN. Several workers may run at once: every step is idempotent.
type Recovery struct {
	e *Engine
	w *dueWorker

	aborted, finished, stuck atomic.Int64
}

// NewRecovery builds a recovery worker that works through e.
func NewRecovery(e *Engine, opt *RecoveryOptions) *Recovery {
	var o RecoveryOptions
	if opt != nil {
		o = *opt
	}
	r := &Recovery{e: e}
	r.w = &dueWorker{e: e, o: dueOptions(o).withDefaults(time.Second), key: cluster.Transfers, act: r.pass,
		who: "transfer recovery", run: "pass", tag: "transfer recovery"}
	return r
}

// Stats reads the counters; safe to call while it runs.
func (r *Recovery) Stats() RecoveryStats {
	return RecoveryStats{Passes: r.w.passes.Load(), Aborted: r.aborted.Load(), Finished: r.finished.Load(), Errors: r.w.errs.Load(),
		Stuck: r.stuck.Load()}
}

// Run makes a pass every Interval until ctx is done, then returns nil. Each
// pass reads only the indexes that may hold a transfer due (slotIndex): an
// idle worker reads none.
func (r *Recovery) Run(ctx context.Context) error { return r.w.Run(ctx) }

// Recover makes one pass over the transfers that are due now, reading every
// slot's index. Indexes it could not read (a slot being moved, a master
// down) make it fail once the transfers of the others are taken care of.
func (r *Recovery) Recover(ctx context.Context) error { return r.w.once(ctx) }

// pass takes care of the due transfers, and tells per slot how many it
// left in place, due as they were (a transfer left for a later pass before
// its next look was set: Redis unreachable, an asset this engine does not
// know).
func (r *Recovery) pass(ctx context.Context, due []indexEntry) map[int]int {
	var failed []indexEntry
	for _, en := range due {
		if err := r.recover(ctx, en); err != nil {
			failed = append(failed, en)
			r.w.errs.Add(1)
			r.w.o.Logger.Warn("transfer recovery: transfer left for a later pass", "transfer", en.member, "err", err)
		}
	}
	left := map[int]int{}
	if len(failed) == 0 {
		return left
	}
	scores := make([]*redis.FloatCmd, len(failed))
	_, _ = r.e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { // one round trip; an error counts nothing left
		for i, en := range failed {
			scores[i] = p.ZScore(ctx, cluster.Transfers(en.slot), en.member)
		}
		return nil
	})
	for i, en := range failed {
		if s, err := scores[i].Result(); err == nil && int64(s) == en.score {
			left[en.slot]++
		}
	}
	return left
}

// maxStuckLook is the longest recovery waits between two looks at a
// transfer left to an operator: well inside the 15 minutes over which the
// alert on stuck parts counts them (deploy/prometheus/alerts.yml).
const maxStuckLook = 5 * time.Minute

// nextLook is when recovery looks at a transfer again should a look at now
// not get to its end: a timeout later; past a one-payer transfer's window
// (untilMs, 0 for the two phases), where no driver sends any of its steps
// and only an operator can finish it, as long again as it has been past,
// up to maxStuckLook. A transfer left to an operator then costs a pass,
// and a line at ERROR, less and less often rather than every timeout for
// good: a failover that leaves many slows the later passes little.
func (e *Engine) nextLook(now, untilMs int64) float64 {
	wait := e.xferTimeout.Milliseconds()
	if past := now - untilMs; untilMs > 0 && past > wait {
		wait = min(past, maxStuckLook.Milliseconds())
	}
	return float64(now + wait)
}

// recover takes one due transfer as far as it goes.
func (r *Recovery) recover(ctx context.Context, en indexEntry) error {
	id, index := en.member, cluster.Transfers(en.slot)
	if i := strings.IndexByte(id, '\n'); i >= 0 {
		return r.recoverPayment(ctx, en, id[:i], id[i+1:])
	}
	rec, err := r.e.transferScript(ctx, id, "read")
	if err != nil {
		return err
	}
	if rec.outcome == "missing" || rec.done { // expired long ago, or found again by a claim: nothing left to do
		return r.e.rdb.ZRem(ctx, index, id).Err()
	}
	body, err := r.e.transferBody(ctx, id)
	if err != nil {
		return err
	}
	t, err := instructions.DecodeTransfer([]byte(body))
	if err != nil {
		return err
	}
	n, err := t.Normalize(r.e.assets)
	if err != nil {
		return err
	}
	pinLanes(&n, rec.holders)
	rec.entry = entryOf(id, []byte(body))
	// The next look, should this one not get to the end.
	if err := r.e.rdb.ZAddXX(ctx, index, redis.Z{Score: r.e.nextLook(en.now, rec.untilMs), Member: id}).Err(); err != nil {
		return err
	}
	var st TransferState
	var stuck int
	switch {
	case rec.status == "preparing" && en.now < rec.deadline:
		return nil
	case rec.status == "preparing" && rec.payer >= 0 && rec.payer < len(n.Parts):
		// One payer: its step decides. Fenced first, it answers what was
		// decided, or a rejection if it never ran.
		n.Payer = rec.payer
		if st, stuck = r.e.drivePayment(ctx, n, rec, nil, true, nil); st.Status == TransferAborted {
			r.aborted.Add(1)
		}
	case rec.status == "preparing":
		reason := r.e.lateReason()
		decided, err := r.e.transferScript(ctx, id, "decide", TransferAborted, reason, r.e.xferTimeout.Milliseconds())
		if err != nil {
			return err
		}
		if decided.status == TransferAborted && decided.err == reason {
			r.aborted.Add(1)
		}
		st, stuck = r.e.drive(ctx, n, decided)
	default:
		st, stuck = r.e.drive(ctx, n, rec)
	}
	r.stuck.Add(int64(stuck))
	if !st.Complete {
		return errors.New("parts left unfinished")
	}
	r.finished.Add(1)
	return nil
}

// recoverPayment takes care of the entry of a quick transfer in its
// payer's slot (pending): transfer id of body. With the record done, the
// entry goes. Else the transfer is claimed again from the body, as a
// client's retry would: the record found (or written anew, when it was
// never written or was lost), the payment is driven late, its payer's step
// fenced first so that it answers what it did; the record another
// transfer's, the payer's run is given back if it applied (yieldStep).
func (r *Recovery) recoverPayment(ctx context.Context, en indexEntry, id, body string) error {
	e, index := r.e, cluster.Transfers(en.slot)
	drop := func() error { return e.rdb.ZRem(ctx, index, en.member).Err() }
	t, err := instructions.DecodeTransfer([]byte(body))
	if err != nil || t.ID != id {
		r.w.o.Logger.Error("transfer recovery: a payment's entry holds no transfer of its id; dropped", "transfer", id, "err", err)
		return drop()
	}
	n, err := t.Normalize(e.assets)
	if err != nil {
		return err // an asset this engine's registry lacks, say: another engine may know it
	}
	if !quickShape(n, n.Payer) {
		r.w.o.Logger.Error("transfer recovery: a payment's entry holds no payment; dropped", "transfer", id)
		return drop()
	}
	e.routeParts(ctx, &n)
	look := e.nextLook(en.now, 0)
	if err := e.rdb.ZAddXX(ctx, index, redis.Z{Score: look, Member: en.member}).Err(); err != nil {
		return err
	}
	rec, err := e.claim(ctx, n, []byte(body), n.Payer)
	if err != nil {
		return err
	}
	if rec.outcome == "conflict" || rec.payer != n.Payer {
		if !e.yieldStep(ctx, n, rec, Outcome{Err: redisFailure(id, context.DeadlineExceeded)}) {
			return errors.New("payer's run not given back yet")
		}
		return drop()
	}
	if rec.done {
		return drop()
	}
	if later := e.nextLook(en.now, rec.untilMs); later > look { // past its window
		if err := e.rdb.ZAddXX(ctx, index, redis.Z{Score: later, Member: en.member}).Err(); err != nil {
			return err
		}
	}
	pinLanes(&n, rec.holders)
	rec.entry = en.member
	st, stuck := e.drivePayment(ctx, n, rec, nil, true, nil)
	r.stuck.Add(int64(stuck))
	if !st.Complete {
		return errors.New("parts left unfinished")
	}
	if st.Status == TransferAborted {
		r.aborted.Add(1)
	}
	r.finished.Add(1)
	return drop()
}
