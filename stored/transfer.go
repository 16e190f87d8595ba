package stored

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
)

// XferReadFields are the record's fields in the order the transfer function
// answers them (after its outcome), then the fingerprint.
var XferReadFields = []string{XferStatus, XferErr, XferDone, XferCreatedMs, XferDeadlineMs, XferHolders,
	XferFinished, XferPayer, XferUntilMs, XferTTLMs, XferFP}
