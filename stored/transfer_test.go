package stored_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/stored"
)

// Each field of a packed claim reads back as written; the body, last, whole
// whatever it holds; a field the claim does not hold, or a claim cut short,
// reads "".
func TestClaim_PackedFieldsReadBack(t *testing.T) {
	values := []string{"fp", "a,b", "1000", "31000", "0", "900000", "86400000", "{\"memo\":\"x\"}\nmore\n"}
	c := stored.PackClaim(values...)
	for i, f := range stored.XferClaimFields {
		assert.Equal(t, values[i], stored.ClaimValue(c, f), f)
	}
	assert.Empty(t, stored.ClaimValue(c, stored.XferStatus))
	assert.Empty(t, stored.ClaimValue("fp\na,b", stored.XferCreatedMs))
	assert.Equal(t, "a,b", stored.ClaimValue("fp\na,b", stored.XferHolders))
}
