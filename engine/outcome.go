package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// Outcome reads the answer recorded for instruction id of holder while Redis
// remembers the id (Options.IdempotencyTTL): the Result it got, or its
// rejection as Outcome.Err (an *Error with the recorded code and op index),
// both marked Replayed. Nothing is applied or written. The record keeps the
// code and the op's index of a rejection, not the op itself, so its message
// is plainer than the first answer's. With Options.MinReplicaAcks, an answer
// read here may not be on the replicas yet: the record is read from the
// master, as a replay is, but not waited for.
//
// Errors: INVALID_ID; INSTRUCTION_NOT_FOUND (never seen, forgotten after the
// TTL, rejected before Redis, or an unknown holder: nothing is recorded for
// those); UNAVAILABLE; INTERNAL (a record it cannot read).
func (e *Engine) Outcome(ctx context.Context, holder, id string) (Outcome, error) {
	for _, v := range [2]struct{ what, s string }{{"holder", holder}, {"instruction id", id}} {
		if err := instructions.CheckID(instructions.NoOp, v.what, v.s); err != nil {
			return Outcome{}, err
		}
	}
	raw, err := e.rdb.Get(ctx, cluster.Tx(holder, id)).Result()
	lane := 0
	if errors.Is(err, redis.Nil) {
		raw, lane, err = e.laneRecord(ctx, holder, id)
	}
	if errors.Is(err, redis.Nil) {
		err := instructions.Errorf(instructions.CodeInstructionNotFound, instructions.NoOp,
			"Redis does not remember instruction %q of holder %s (ids are kept for %s)", id, holder, shortDuration(e.ttl))
		err.ID = id
		return Outcome{}, err
	}
	if err != nil {
		return Outcome{}, redisFailure(id, err)
	}
	outcome, err := stored.RecordOutcome(raw)
	if err != nil {
		return Outcome{}, e.internal(id, "idempotency record of %s: %v", holder, err)
	}
	// The same reading as the script's reply to a replay; Steps is nil: the
	// record does not keep the instruction.
	res, err := e.parseReply(instructions.Normalized{ID: id, Holder: holder}, []any{int64(1), outcome})
	var ierr *Error
	if errors.As(err, &ierr) && ierr.Code == instructions.CodeInternal {
		return Outcome{}, err
	}
	res.Lane = lane
	return Outcome{Result: res, Err: err}, nil
}

// laneRecord finds instruction id's record in the lane of a hot holder its
// id went to: the lane of the holder's count, or of an earlier count still
// inside the idempotency window. redis.Nil when there is none.
func (e *Engine) laneRecord(ctx context.Context, holder, id string) (string, int, error) {
	l, err := e.readLanes(ctx, holder)
	if err != nil || l.count < 2 {
		return "", 0, redis.Nil
	}
	lanes := []int{laneOf(id, l.count)}
	for _, era := range l.eras {
		lanes = append(lanes, laneOf(id, era.count))
	}
	for _, lane := range lanes {
		raw, err := e.rdb.Get(ctx, cluster.Tx(instructions.LaneHolder(holder, lane), id)).Result()
		if lane > 0 && !errors.Is(err, redis.Nil) {
			return raw, lane, err
		}
	}
	return "", 0, redis.Nil
}

// shortDuration writes 24h rather than 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
