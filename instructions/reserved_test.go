package instructions

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalize_RefusesTheEnginesOwnNames(t *testing.T) {
	cases := []struct {
		name  string
		in    Instruction
		op    int
		owner string
	}{
		{"the sweeper's release id", New("sweep-0123456789abcdef01234567", "h").Release("o"), NoOp, "sweeper"},
		{"a transfer's prepare (and fence) id", New("x:t1:p", "h").Credit("CNY", "1"), NoOp, "transfers"},
		{"a transfer's commit id", New("x:t1:c", "h").Credit("CNY", "1"), NoOp, "transfers"},
		{"a transfer's abort id", New("x:t1:a", "h").Credit("CNY", "1"), NoOp, "transfers"},
		{"a transfer's clearing account", New("i", "h").WithCounterparty("x:t1").Credit("CNY", "1"), NoOp, "transfers"},
		{"a transfer's hold", New("i", "h").Credit("CNY", "1").Release("x:t1"), 1, "transfers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate(testAssets)
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.ErrorIs(t, err, ErrInvalidID)
			assert.Equal(t, c.op, e.OpIndex)
			assert.Contains(t, e.Message, c.owner)
			assert.Contains(t, e.Message, "the engine's own use")
		})
	}
	for _, in := range []Instruction{
		New("i", "h").WithCounterparty("sweep-1").Credit("CNY", "1"),
		New("i", "h").Freeze("CNY", "1", "sweep-1", 0),
		New("Sweep-1", "h").Credit("CNY", "1"),
		New("i", "x:h").Credit("CNY", "1"),
	} {
		assert.NoError(t, in.Validate(testAssets), "only the sweeper's ids begin with sweep-, only transfers' names with x:: %+v", in)
	}
}
