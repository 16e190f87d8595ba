// Package engine applies instructions to Redis: it validates them, builds
// their keys and arguments, calls the library's apply function (FCALL, alone
// or pipelined in batches), and turns its replies into typed results and
// errors.
// With package outbox (the relay), it is the only package that talks to
// Redis.
//
// # Basics
//
// All keys of a holder share the hash tag {h:<holder>} and so one slot; its
// whole state is one hash (key format 2). One run of the apply function
// changes a holder's balances, frozen funds, points, coupons and holds all or
// nothing, records the outcome under the instruction id, and appends the
// event to the slot's outbox, in one round trip. Every call goes through one
// submit path (submit.go), which loads the library on a master that answers
// "Function not found" and sends the call again.
//
// The instruction id is the idempotency key, scoped to the holder: the same
// id with the same body returns the first outcome, marked Replayed, and
// changes nothing; with another body it is IDEMPOTENCY_CONFLICT. This is what
// makes retries safe, including go-redis's own: it re-sends a command after a
// read timeout or a broken connection, so a call may arrive twice. Outcome
// reads the recorded answer of an id without sending the instruction again.
//
// A transfer (Transfer) spans holders on different slots: each part runs as
// an instruction on its holder, in two phases around one atomic write of the
// transfer's record, {x:<id>} (docs/transfers.md). Recovery finishes the
// transfers a dead caller left.
//
// Every failure is an *instructions.Error whose code is matched with
// errors.Is against the codes (instructions.CodeInsufficientFunds, ...), or
// against this package's names for them (ErrInsufficientFunds, ...).
//
// # Caveats
//
// UNAVAILABLE means the outcome is unknown (Redis unreachable, a timeout, a
// failover): retry with the same id. Give the client ContextTimeoutEnabled so
// that deadlines reach the socket.
//
// Replication is asynchronous: an instruction acknowledged by a master that
// dies before its replica copied it is lost from Redis.
package engine
