// Package lua holds atomledger's Lua scripts, embedded in the binary, with
// their SHA-1 digests.
//
// # Basics
//
// apply.lua is the one general script: it applies a whole instruction to one
// holder's keys, all or nothing, with its idempotency record, its outbox event
// and its expiry index entry, in one run. state.lua reads a holder's whole
// state in one consistent step. transfer.lua keeps the record of a
// cross-holder transfer; its commit point is one run of it. Each starts with
// a #!lua line, so Redis 7 refuses a write script before it runs (OOM,
// READONLY, NOREPLICAS) instead of at its first write, and each touches only
// the keys it is given.
//
// # Caveats
//
// The script cache of a server is volatile (restart, failover, SCRIPT FLUSH):
// callers run scripts by SHA and fall back to the source on NOSCRIPT. The
// golden file testdata/sha.golden lists each script's SHA-1 so that an edit of
// a script shows in review; refresh it with go test ./lua -update.
package lua

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
)

// Script is one embedded script.
type Script struct {
	Name   string
	Source string
	SHA1   string // hex digest, the name Redis caches it under
}

func newScript(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{Name: name, Source: src, SHA1: hex.EncodeToString(sum[:])}
}

var (
	//go:embed apply.lua
	applySource string
	//go:embed state.lua
	stateSource string
	//go:embed transfer.lua
	transferSource string
)

// The scripts.
var (
	Apply    = newScript("apply.lua", applySource)
	State    = newScript("state.lua", stateSource)
	Transfer = newScript("transfer.lua", transferSource)
)

// All lists every script, for loading them on each server.
var All = []*Script{Apply, State, Transfer}
