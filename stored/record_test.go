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

func TestRecord_RejectionReadBack(t *testing.T) {
	fp := strings.Repeat("c", 64)
	rec := stored.Record(fp, stored.Rejection("OVERFLOW", 2, "CNY:9"))
	assert.Equal(t, fp[:16]+"err\nOVERFLOW\n2\nCNY:9", rec)
	assert.True(t, stored.RecordRefused(rec, fp, "OVERFLOW"))
	assert.False(t, stored.RecordRefused(rec, fp, "UNAVAILABLE"))
	assert.False(t, stored.RecordApplied(rec, fp))
	code, idx, detail, ok := stored.RecordRejection(rec, fp)
	assert.Equal(t, []any{"OVERFLOW", "2", "CNY:9", true}, []any{code, idx, detail, ok})
	applied := stored.AppliedRecord(fp, `{"s":"3","st":"active","b":{"CNY":["100","0"]},"c":{},"h":{}}`)
	assert.True(t, stored.RecordApplied(applied, fp))
	assert.False(t, stored.RecordApplied(applied, strings.Repeat("d", 64)), "another body's record")
	_, _, _, ok = stored.RecordRejection(applied, fp)
	assert.False(t, ok)
}

func TestReadKept_ReadsWhatKeptResultWrites(t *testing.T) {
	body := `{"s":"4","st":"active","b":{"CNY":["90","10"]},"p":["5","1"],"c":{"c1":"held:o1"},"h":{"o1":"0|CNY=10|c1"}}`
	var fromJSON, fromKept []string
	collect := func(to *[]string) func(byte, string, [2]string) bool {
		return func(kind byte, name string, v [2]string) bool {
			*to = append(*to, string(kind)+" "+name+" "+v[0]+" "+v[1])
			return true
		}
	}
	require.True(t, stored.ReadResult(body, collect(&fromJSON)))
	kept := stored.KeptResult(body)
	assert.Equal(t, "4 bCNY/90/10 p5/1 cc1/held:o1 ho1/0|CNY=10|c1", kept)
	require.True(t, stored.ReadKept(kept, collect(&fromKept)))
	assert.Equal(t, fromJSON, fromKept)
	assert.False(t, stored.ReadResult(`{"s":"4","s":"5"}`, collect(new([]string))), "a key twice")
	assert.False(t, stored.ReadKept("4 x1", collect(new([]string))))
}
