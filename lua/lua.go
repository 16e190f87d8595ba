// Package lua holds atomledger's Redis Functions library, embedded in the
// binary, with its SHA-1 digest.
//
// # Basics
//
// atomledger.lua is one library, named after the key format it writes
// (atomledger_v2), with three functions: apply applies a whole instruction to
// one holder's hash, all or nothing, with its idempotency record, its outbox
// event and its expiry index entries, in one run, from flat arguments (the
// engine's door); apply_json does the same from one JSON instruction, for
// clients in any language (it checks what the engine checks before Redis,
// then hands apply the same arguments); transfer keeps the record of a
// cross-holder transfer, whose commit point is one run of it. None has the
// no-writes flag, so Redis refuses a call before it runs (OOM,
// READONLY, NOREPLICAS, cross-slot keys) instead of at its first write, and
// each touches only the keys it is given.
//
// # Caveats
//
// A library is persisted and replicated to a master's replicas, but not to
// other shards: a new master, or one whose functions were flushed, answers
// "Function not found" (the call did not run). The engine loads the library
// there and sends the call again.
//
// A part of the library is generated (go generate ./lua, internal/luagen),
// between its "-- BEGIN generated" and "-- END generated" lines, so that each
// fact it shares with the Go side is written once, in Go: the contract's key
// names and the slot tag of every slot, with which the JSON door and transfer
// refuse any key that is not the contract's for the holder, or the transfer,
// and its slot (the engine's apply, the hot path, checks only that its four
// keys are distinct); the op table (instructions.Ops: which ops a suspended
// holder is refused, the fields of each client op) and the JSON keys of an
// instruction and an op; the layout of apply's arguments (internal/libcall),
// the most ops, the longest hold ttl, memo and instruction text, the fewest
// and most lanes, the default counterparty and
// idempotency ttl, and the engine's reserved name prefixes. The library
// builds its tables from them once, when it loads. The handlers stay hand-written, one per op of the table
// (TestLibrary_HandlesTheOpsOfTheTable); TestGenerated_IsCurrent fails when
// the generated part is out of date. The golden file testdata/sha.golden
// holds the library's SHA-1 so that an edit shows in review; refresh it with
// go test ./lua -update.
package lua

//go:generate go run ../internal/luagen atomledger.lua

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
)

//go:embed atomledger.lua
var source string

// Library is the embedded library.
var Library = struct {
	Name   string // what FUNCTION LOAD registers it under
	Source string
	SHA1   string // hex digest of Source, for review
}{Name: "atomledger_v2", Source: source, SHA1: sha1Hex(source)}

// The library's functions, as FCALL names them.
const (
	FuncApply     = "apply"
	FuncApplyJSON = "apply_json" // for clients other than the engine: docs/json-door.md
	FuncTransfer  = "transfer"
)

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
