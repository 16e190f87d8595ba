package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// HotSwept is what one sweep of a hot holder did.
type HotSwept struct {
	Holder  string   `json:"holder"`
	Lanes   int      `json:"lanes"`             // the holder's lane count (1: a plain holder, nothing to do)
	Moved   int      `json:"moved"`             // transfers from a receiving lane into lane 0 that committed
	Missing []string `json:"missing,omitempty"` // lanes not in Redis (a master lost its data): rebuild them
}

// HotSweepID is the id of the transfer that moves what lane (1..) of
// holder holds at its seq into lane 0: a sweep that runs twice, or two
// sweepers at once, find the same lane at the same seq and run one transfer;
// once it has run, the lane's seq has moved and its figures with it.
func HotSweepID(holder string, lane int, seq int64) string { return sweepID(holder, lane, seq, 0) }

// sweepID is the id of a lane's sweep at seq, attempt being how many
// sweeps at that seq were found aborted before it (their sweeper killed
// before the lane's step: nothing moved).
func sweepID(holder string, lane int, seq int64, attempt int) string {
	text := holder + "\x00" + strconv.Itoa(lane) + "\x00" + strconv.FormatInt(seq, 10)
	if attempt > 0 {
		text += "\x00" + strconv.Itoa(attempt)
	}
	sum := sha256.Sum256([]byte(text))
	return instructions.HotSweepPrefix + hex.EncodeToString(sum[:])[:24]
}

// sweepAttempts bounds the sweeps tried at one seq of a lane in one pass.
const sweepAttempts = 4

// hotSweepTTL is how long a sweep's transfer record and steps' idempotency
// records live (the engine's idempotency TTL if shorter): a sweep is never
// sent again once it has run, as the lane's seq has moved, and a busy lane
// swept every second would otherwise keep a day of them (about 1.8 KB each).
const hotSweepTTL = time.Hour

// sweeps gives the engine the sweep's transfers run on: this one's, with
// the idempotency TTL at most hotSweepTTL.
func (e *Engine) sweeps() *Engine {
	e.sweepOnce.Do(func() {
		e.sweepEng = e
		if e.ttl > hotSweepTTL {
			e.sweepEng = New(e.rdb, &Options{Assets: e.assets, IdempotencyTTL: hotSweepTTL, MinReplicaAcks: e.minAcks,
				ReplicaAckTimeout: e.ackTimeout, TransferTimeout: e.xferTimeout, Logger: e.log})
		}
	})
	return e.sweepEng
}

// SweepHot moves the available balances and points of holder's receiving
// lanes into lane 0, one one-payer transfer per lane that holds anything
// (HotSweepID). A plain holder has nothing to sweep.
//
// Errors: INVALID_ID, HOLDER_NOT_FOUND, UNAVAILABLE; a lane's transfer
// that could not be decided is left to transfer recovery and tried again by
// the next sweep, which finds the lane at the same seq if it did not run.
func (e *Engine) SweepHot(ctx context.Context, holder string) (HotSwept, error) {
	if err := instructions.CheckID(instructions.NoOp, "holder", holder); err != nil {
		return HotSwept{}, err
	}
	hs, err := e.hashes(ctx, holder)
	if err != nil {
		return HotSwept{}, err
	}
	if hs[0][stored.FieldStatus] == "" {
		return HotSwept{}, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp, "holder %s not found", holder)
	}
	out := HotSwept{Holder: holder, Lanes: len(hs)}
	var errs []error
	for lane := 1; lane < len(hs); lane++ {
		h, name := hs[lane], instructions.LaneHolder(holder, lane)
		if h[stored.FieldStatus] == "" {
			out.Missing = append(out.Missing, name)
			continue
		}
		t, ok := e.sweepTransfer(holder, lane, h)
		if !ok {
			continue
		}
		seq, _ := strconv.ParseInt(h[stored.FieldSeq], 10, 64)
		for attempt := range sweepAttempts {
			t.ID = sweepID(holder, lane, seq, attempt)
			n, err := t.Normalize(e.assets)
			if err != nil {
				errs = append(errs, err)
				break
			}
			st, err := e.sweeps().transfer(ctx, t, n)
			if err == nil && st.Status == TransferAborted && st.Replayed {
				continue // an earlier sweep at this seq, aborted: nothing moved
			}
			switch {
			case err != nil:
				errs = append(errs, err)
			case st.Status == TransferCommitted:
				out.Moved++
			case st.Status == TransferAborted && st.Error != nil:
				errs = append(errs, st.Error)
			}
			break
		}
	}
	return out, errors.Join(errs...)
}

// sweepTransfer is the transfer that empties lane's available figures (h,
// its hash) into lane 0, without its id (the caller names each attempt:
// sweepID); false when there is nothing to move.
func (e *Engine) sweepTransfer(holder string, lane int, h map[string]string) (instructions.Transfer, bool) {
	var take, give []instructions.Op
	for f, raw := range h {
		units, _ := strconv.ParseInt(raw, 10, 64)
		switch {
		case units <= 0:
		case strings.HasPrefix(f, stored.PrefixBalance):
			a := f[len(stored.PrefixBalance):]
			if _, known := e.assets.Scale(a); !known {
				continue // removed from the registry: it stays in its lane, shown in minor units
			}
			amount := instructions.Amount(e.amount(a, raw))
			take = append(take, instructions.Op{Op: instructions.OpDebit, Asset: a, Amount: amount})
			give = append(give, instructions.Op{Op: instructions.OpCredit, Asset: a, Amount: amount})
		case f == stored.FieldPointsAvailable:
			take = append(take, instructions.Op{Op: instructions.OpSpendPoints, Amount: instructions.Amount(raw)})
			give = append(give, instructions.Op{Op: instructions.OpEarnPoints, Amount: instructions.Amount(raw)})
		}
	}
	if len(take) == 0 {
		return instructions.Transfer{}, false
	}
	// The same lane at the same seq gives the same body: ops in one order.
	byName := func(a, b instructions.Op) int { return cmp.Compare(a.Op+a.Asset, b.Op+b.Asset) }
	slices.SortFunc(take, byName)
	slices.SortFunc(give, byName)
	return instructions.Transfer{Parts: []instructions.Part{
		{Holder: instructions.LaneHolder(holder, lane), Ops: take},
		{Holder: holder, Ops: give},
	}}, true
}

// HotSweeperStats are a hot sweeper's counters, for metrics.
type HotSweeperStats struct {
	Passes  int64 // completed passes over every hot holder
	Moved   int64 // lane-to-lane-0 transfers committed
	Missing int64 // lanes found missing (counted each pass)
	Errors  int64 // failed sweeps of a holder, tried again next pass
}

// HotSweeper sweeps every hot holder (the set cluster.HotHolders) on a schedule.
type HotSweeper struct {
	e        *Engine
	interval time.Duration
	log      *slog.Logger

	passes, moved, missing, errs atomic.Int64
}

// NewHotSweeper builds a sweeper that sweeps every interval (at least 10ms).
func NewHotSweeper(e *Engine, interval time.Duration, log *slog.Logger) *HotSweeper {
	if log == nil {
		log = slog.Default()
	}
	return &HotSweeper{e: e, interval: max(interval, 10*time.Millisecond), log: log}
}

// Stats reads the counters; safe to call while it runs.
func (s *HotSweeper) Stats() HotSweeperStats {
	return HotSweeperStats{Passes: s.passes.Load(), Moved: s.moved.Load(), Missing: s.missing.Load(), Errors: s.errs.Load()}
}

// Run sweeps until ctx is done, then returns nil.
func (s *HotSweeper) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s.pass(ctx)
	}
}

// pass sweeps each hot holder once.
func (s *HotSweeper) pass(ctx context.Context) {
	holders, err := s.e.rdb.SMembers(ctx, cluster.HotHolders()).Result()
	if err != nil {
		if ctx.Err() == nil {
			s.errs.Add(1)
			s.log.Warn("hot sweep: read the hot holders", "err", err)
		}
		return
	}
	for _, h := range holders {
		got, err := s.e.SweepHot(ctx, h)
		s.moved.Add(int64(got.Moved))
		s.missing.Add(int64(len(got.Missing)))
		if len(got.Missing) > 0 {
			s.log.Error("hot sweep: lanes missing from Redis (their master lost its data?): rebuild them from the ledger",
				"holder", h, "lanes", strings.Join(got.Missing, ","))
		}
		if err != nil && ctx.Err() == nil {
			s.errs.Add(1)
			s.log.Warn("hot sweep: left for the next pass", "holder", h, "err", err)
		}
	}
	s.passes.Add(1)
}
