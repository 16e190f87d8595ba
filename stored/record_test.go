package stored_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

// TestAppliedRecord_JSONDoorKeepsTheWholeResult: a record written again
// from the ledger is what the library wrote: the short form for the
// engine's instructions, the whole result for the JSON door's (told apart
// by the fingerprint: SHA-1 of the text there, SHA-256 here), so that a
// replay after a rebuild still answers the first answer byte for byte.
func TestAppliedRecord_JSONDoorKeepsTheWholeResult(t *testing.T) {
	state := `{"s":"3","st":"active","b":{"CNY":["100","0"]},"c":{},"h":{}}`
	door := strings.Repeat("a", 40)
	assert.Equal(t, door[:16]+state, stored.AppliedRecord(door, state))
	eng := strings.Repeat("b", 64)
	assert.Equal(t, eng[:16]+"3 bCNY/100/0", stored.AppliedRecord(eng, state))
}

// RecordOutcome reads a record of either key format as the library replays it.
func TestRecordOutcome_BothFormats(t *testing.T) {
	fp := "0123456789abcdef0123456789abcdef"
	for rec, want := range map[string]string{
		stored.Record(fp, "2 bCNY/100/0"):                   "ok\n2 bCNY/100/0",
		stored.Record(fp, "err\nHOLD_EXPIRED\n0\n"):         "err\nHOLD_EXPIRED\n0\n",
		stored.Record(fp, "err\nINSUFFICIENT_FUNDS\n0\n12"): "err\nINSUFFICIENT_FUNDS\n0\n12",
		fp + "\nok\n{\"s\":\"2\"}":                          "ok\n{\"s\":\"2\"}",
		fp + "\nerr\nHOLD_EXPIRED\n0\n":                     "err\nHOLD_EXPIRED\n0\n",
	} {
		got, err := stored.RecordOutcome(rec)
		require.NoError(t, err, "%q", rec)
		assert.Equal(t, want, got, "%q", rec)
	}
	for _, rec := range []string{"", "0123456789abcdef", fp + "\nmaybe\n"} {
		_, err := stored.RecordOutcome(rec)
		assert.Error(t, err, "%q", rec)
	}
}
