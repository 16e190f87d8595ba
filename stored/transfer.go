package stored

import "strings"

// Fields of a transfer's record {x:<id>} (docs/transfers.md, The
// protocol), as the library's transfer function and the engine's one-payer
// claim and booking write them.
const (
	XferStatus     = "status" // preparing, committed, aborted
	XferErr        = "err"    // the abort's reason (JSON)
	XferFP         = "fp"
	XferBody       = "body"
	XferHolders    = "holders" // the parts' holders, comma-separated
	XferCreatedMs  = "created_ms"
	XferDeadlineMs = "deadline_ms"
	XferDecidedMs  = "decided_ms"
	XferFinished   = "finished" // per part, '1' once its commit or abort applied
	XferDone       = "done"     // "1" once every part is finished
	XferDoneMs     = "done_ms"
	XferPayer      = "payer"    // a one-payer transfer's paying part, "" for the two phases
	XferUntilMs    = "until_ms" // until when a one-payer transfer's steps may be sent again
	XferTTLMs      = "ttl_ms"   // the idempotency TTL of the engine that began it
	XferClaim      = "claim"    // a one-payer transfer's claimed fields, packed (XferClaimFields)
)

// XferClaimFields are the fields a one-payer transfer's claim writes, in the
// order its one field, XferClaim, holds their values, each followed by a
// newline but the body, which is last (a body may hold anything). A record
// whose status is absent and which has a claim is preparing. A field of the
// record's own is read before the claim's: the library's begin writes every
// field, and the claim, made with HSETNX of its one field, may come after it.
var XferClaimFields = []string{XferFP, XferHolders, XferCreatedMs, XferDeadlineMs, XferPayer, XferUntilMs, XferTTLMs, XferBody}

// PackClaim is the value of XferClaim for values, those of XferClaimFields.
func PackClaim(values ...string) string { return strings.Join(values, "\n") }

// ClaimValue is field's value in packed claim c ("" if c does not have it).
func ClaimValue(c, field string) string {
	for _, f := range XferClaimFields {
		v, rest, more := strings.Cut(c, "\n")
		if f == field {
			if f == XferBody {
				return c
			}
			return v
		}
		if !more {
			return ""
		}
		c = rest
	}
	return ""
}

// XferReadFields are the record's fields in the order the transfer function
// answers them (after its outcome), then the fingerprint.
var XferReadFields = []string{XferStatus, XferErr, XferDone, XferCreatedMs, XferDeadlineMs, XferHolders,
	XferFinished, XferPayer, XferUntilMs, XferTTLMs, XferFP}
