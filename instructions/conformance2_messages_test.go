package instructions_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// Bad input gets a clear error in the user's language: a body, an op or a
// transfer's part that is not a JSON object is told what is wanted, never
// the Go type it failed to fill.
func TestConformance2_NotAnObjectSaysWhatIsWanted(t *testing.T) {
	cases := []struct {
		name, body, got string
		transfer        bool
	}{
		{"an instruction that is a number", `5`, "number", false},
		{"an instruction that is a list", `[]`, "array", false},
		{"an instruction that is a string", `"x"`, "string", false},
		{"an op that is a number", `{"id":"a","holder":"u","ops":[5]}`, "number", false},
		{"an instruction that is null", ` null `, "null", false},
		{"an op that is null", `{"id":"a","holder":"u","ops":[null]}`, "null", false},
		{"a transfer that is a number", `5`, "number", true},
		{"a transfer that is null", `null`, "null", true},
		{"a part that is null", `{"id":"t","parts":[null,{"holder":"b","ops":[{"op":"earn_points","amount":"1"}]}]}`, "null", true},
		{"a part that is a number", `{"id":"t","parts":[5,{"holder":"b","ops":[{"op":"earn_points","amount":"1"}]}]}`, "number", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.transfer {
				_, err = instructions.DecodeTransfer([]byte(c.body))
			} else {
				_, err = instructions.Decode([]byte(c.body))
			}
			var e *instructions.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, instructions.CodeInvalidInstruction, e.Code)
			assert.Contains(t, e.Message, "a JSON object, got "+c.got)
			for _, goSpeak := range []string{"Go value", "struct", "json:", "RawMessage", "instructions.Op"} {
				assert.NotContains(t, e.Message, goSpeak)
			}
		})
	}
}
