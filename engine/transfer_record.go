package engine

import (
	"context"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/instructions"
)

// The transfer record {x:<id>}, as the library's transfer function keeps it
// and answers it.

// transferRecord is the reply of the library's transfer function.
type transferRecord struct {
	outcome, status, err string
	done                 bool
	createdMs, deadline  int64
	holders              string // comma-separated
	finished             string // per part, '1' once its commit or abort applied
	// payer is the part whose run commits a one-payer transfer, -1 for the two
	// phases; until then (ms), its steps may be sent again (transfer_pay.go).
	payer   int
	untilMs int64
	// ttlMs is the idempotency TTL of the engine that began the transfer,
	// 0 for a record that does not say (stepTTL).
	ttlMs int64
	// claim is the record's packed claim (stored.XferClaim) when it is in
	// that form and was read by a claim, for the booking; "" otherwise.
	claim string
	// entry is the payment's entry in its payer's slot (entryOf) when its
	// driver has it at hand, for unpend; not read.
	entry string
}

// partFinished tells whether part i's commit or abort is known to have applied.
func (r transferRecord) partFinished(i int) bool { return i < len(r.finished) && r.finished[i] == '1' }

// holdersOf gives the parts' holders as the record keeps them.
func holdersOf(n instructions.NormalizedTransfer) string {
	hs := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		hs[i] = p.Holder
	}
	return strings.Join(hs, ",")
}

// transferScript runs one action of the library's transfer function on a
// transfer's record.
func (e *Engine) transferScript(ctx context.Context, id, action string, args ...any) (transferRecord, error) {
	return e.recordOf(id, e.submit(ctx, []req{transferReq(id, action, args...)})[0])
}

// recordOf reads what a transfer function call got.
func (e *Engine) recordOf(id string, got sent) (transferRecord, error) {
	err := got.cmd.Err()
	if err == nil {
		err = e.ackedOn(got)
	}
	if err != nil {
		return transferRecord{}, redisFailure(id, err)
	}
	v, _ := got.cmd.StringSlice()
	if len(v) == 10 { // a library before ttl_ms
		v = append(v, "")
	}
	if len(v) != 11 {
		return transferRecord{}, e.internal(id, "unexpected transfer function reply %v", got.cmd.Val())
	}
	return parseRecord(v), nil
}

// parseRecord reads the outcome and the record's fields (stored.XferReadFields).
func parseRecord(v []string) transferRecord {
	rec := transferRecord{outcome: v[0], status: v[1], err: v[2], done: v[3] == "1", holders: v[6], finished: v[7], payer: -1}
	rec.createdMs, _ = strconv.ParseInt(v[4], 10, 64)
	rec.deadline, _ = strconv.ParseInt(v[5], 10, 64)
	if v[8] != "" {
		rec.payer, _ = strconv.Atoi(v[8])
		rec.untilMs, _ = strconv.ParseInt(v[9], 10, 64)
	}
	rec.ttlMs, _ = strconv.ParseInt(v[10], 10, 64)
	return rec
}
