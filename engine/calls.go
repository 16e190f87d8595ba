package engine

import (
	"strconv"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// The KEYS and ARGV of every library call: the one Go file that knows them
// (lua/atomledger.lua's header says the same from the other side; the
// idempotency record's form is package stored's).

// The KEYS of apply.
const (
	keyHolder = iota // the holder hash {h:X}
	keyTx            // the idempotency record
	keyOutbox        // the slot's outbox stream
	keyExpiry        // the slot's expiry index
)

// The ARGV of apply (internal/libcall, which the library's generated part
// follows).
const (
	argHolder = libcall.Holder
	argID     = libcall.ID
	argFP     = libcall.FP
	argTTL    = libcall.TTL
	argCP     = libcall.CP
	argMemo   = libcall.Memo
	argXfer   = libcall.Xfer
	argRoute  = libcall.Route
	argsFixed = libcall.Fixed
	argsPerOp = libcall.PerOp
)

// call is an instruction ready for apply.
type call struct {
	n    instructions.Normalized
	keys []string
	args []any
}

func (c call) req() req { return req{fn: lua.FuncApply, keys: c.keys, args: c.args} }

// routed gives c routed by a hot holder's lane count: apply refuses it
// LANES_CHANGED, writing nothing, if the holder's count is not count. The
// arguments are copied (c's stay unrouted); the fingerprint stays, as the
// route is not in it. A count of 0 sends it unchecked.
func (c call) routed(count int) call {
	c.args = append([]any(nil), c.args...)
	c.args[argRoute] = noRoute
	if count > 0 {
		c.args[argRoute] = strconv.Itoa(count)
	}
	return c
}

// build gives apply's keys and arguments for a normalized instruction.
func (e *Engine) build(n instructions.Normalized) call {
	slot := cluster.HolderSlot(n.Holder)
	keys := []string{cluster.Holder(n.Holder), cluster.Tx(n.Holder, n.ID), cluster.Outbox(slot), cluster.Expiry(slot)}

	args := make([]any, argsFixed, argsFixed+argsPerOp*len(n.Steps))
	args[argHolder], args[argID], args[argTTL], args[argCP], args[argMemo], args[argXfer], args[argRoute] =
		n.Holder, n.ID, e.idemTTL, n.Counterparty, n.Memo, n.Transfer, noRoute
	for _, s := range n.Steps {
		args = append(args, opArg(s.Op), s.Asset, numArg(s.Units), s.Hold, s.Coupon, numArg(s.Ms))
	}
	args[argFP] = fingerprint(args)
	return call{n: n, keys: keys, args: args}
}

// transferReq is one action of the transfer function on transfer id's record.
func transferReq(id, action string, args ...any) req {
	record := cluster.Transfer(id)
	keys := []string{record, cluster.Transfers(cluster.Slot(record))}
	return req{fn: lua.FuncTransfer, keys: keys, args: append([]any{action, id}, args...)}
}

// A string put in an interface is copied to the heap: the op names and "0",
// which most steps have, are put in interfaces once, here, for every call.
var (
	opArgs      = map[string]any{}
	zeroArg any = "0"
	noRoute any = ""
)

func init() {
	for _, op := range instructions.Ops() {
		opArgs[op.Name] = op.Name
	}
}

func opArg(op string) any {
	if a, ok := opArgs[op]; ok {
		return a
	}
	return op
}

// indexArgs are the part indexes and counts a transfer's record takes, put
// in interfaces once.
var indexArgs = func() (a [instructions.MaxParts + 1]any) {
	for i := range a {
		a[i] = strconv.Itoa(i)
	}
	return a
}()

// indexArg is i as the transfer function takes a part's index or count.
func indexArg(i int) any {
	if i >= 0 && i < len(indexArgs) {
		return indexArgs[i]
	}
	return strconv.Itoa(i)
}

func numArg(v int64) any {
	if v == 0 {
		return zeroArg
	}
	return strconv.FormatInt(v, 10)
}

// fenceRecord is the rejection a transfer writes under a step's id so that
// the step, sent again, replays it instead of applying: UNAVAILABLE, which
// the library never answers itself.
func fenceRecord(fp, transfer, what string) string {
	return stored.Record(fp, stored.Rejection(string(instructions.CodeUnavailable), -1, fenceText(transfer, what)))
}

// givenBack is what a fence of a payment given back says of it.
const givenBack = "given back"

// fenceText is a fence's message: transfer was what (aborted, given back).
func fenceText(transfer, what string) string { return "transfer " + transfer + " was " + what }
