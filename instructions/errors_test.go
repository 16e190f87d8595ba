package instructions_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/instructions"
)

// Each code is an error, and an *Error is its code for errors.Is and no
// other code; the cause stays reachable beside it.
func TestCodes_AnErrorIsItsCode(t *testing.T) {
	cause := errors.New("connection refused")
	seen := map[instructions.Code]bool{}
	for _, c := range instructions.Codes {
		assert.False(t, seen[c], "%s listed twice", c)
		seen[c] = true
		assert.Equal(t, string(c), c.Error())
		err := error(&instructions.Error{ID: "i", Code: c, OpIndex: 0, Err: cause})
		for _, other := range instructions.Codes {
			assert.Equal(t, other == c, errors.Is(err, other), "%s is %s", c, other)
		}
		assert.ErrorIs(t, err, cause)
	}
	assert.ErrorIs(t, instructions.Errorf(instructions.CodeInsufficientFunds, 1, "x"), instructions.ErrInsufficientFunds)
}
