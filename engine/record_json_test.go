package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/engine"
)

// TestAppliedRecord_JSONDoorKeepsTheWholeResult: a record written again
// from the ledger is what the library wrote: the short form for the
// engine's instructions, the whole result for the JSON door's (told apart
// by the fingerprint: SHA-1 of the text there, SHA-256 here), so that a
// replay after a rebuild still answers the first answer byte for byte.
func TestAppliedRecord_JSONDoorKeepsTheWholeResult(t *testing.T) {
	state := `{"s":"3","st":"active","b":{"CNY":["100","0"]},"c":{},"h":{}}`
	door := strings.Repeat("a", 40)
	assert.Equal(t, door[:16]+state, engine.AppliedRecord(door, state))
	eng := strings.Repeat("b", 64)
	assert.Equal(t, eng[:16]+"3 bCNY/100/0", engine.AppliedRecord(eng, state))
}
