package instructions_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// DESIGN.md: an id made only of dots is INVALID_ID ("." and ".." are steps
// of a URL path). A transfer's id is refused alike, and the message says
// why: such an id matches the id's character class, so "must match" alone
// would tell the user nothing.
func TestConformance2_TransferIDSaysWhatIsWrong(t *testing.T) {
	reg := instructions.MustParseAssets(instructions.DefaultAssets)
	parts := []instructions.Part{
		{Holder: "a", Ops: []instructions.Op{{Op: "debit", Asset: "CNY", Amount: "1"}}},
		{Holder: "b", Ops: []instructions.Op{{Op: "credit", Asset: "CNY", Amount: "1"}}},
	}
	cases := []struct{ id, msg string }{
		{"", "transfer id is required"},
		{"..", `transfer id ".." is dots alone`},
		{".", `transfer id "." is dots alone`},
		{"a b", `transfer id "a b" must match [A-Za-z0-9_.:-]{1,60}`},
		{strings.Repeat("t", 61), `must match [A-Za-z0-9_.:-]{1,60}`},
	}
	for _, c := range cases {
		_, err := instructions.Transfer{ID: c.id, Parts: parts}.Normalize(reg)
		var e *instructions.Error
		require.ErrorAs(t, err, &e, "id %q", c.id)
		assert.Equal(t, instructions.CodeInvalidID, e.Code, "id %q", c.id)
		assert.Contains(t, e.Message, c.msg, "id %q", c.id)
		require.NotNil(t, instructions.CheckTransferID(c.id), "id %q", c.id)
		assert.Equal(t, e.Message, instructions.CheckTransferID(c.id).Message, "reads by id say the same")
	}
	_, err := instructions.Transfer{ID: strings.Repeat("t", 60), Parts: parts}.Normalize(reg)
	assert.NoError(t, err, "60 characters")
	assert.Nil(t, instructions.CheckTransferID(strings.Repeat("t", 60)))
}
