package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/instructions"
)

// A call whose context ended before its pipeline left is answered
// UNAVAILABLE by the sender too: its caller may reach its select with both
// the answer and the context's end ready, and must not take a zero Outcome
// there for a result.
func TestSendGroup_CallCutShortIsAnsweredUnavailable(t *testing.T) {
	e := New(nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := &grouped{ctx: ctx, c: call{n: instructions.Normalized{ID: "i"}}, done: make(chan struct{})}
	e.sendGroup([]*grouped{g})
	<-g.done
	assert.ErrorIs(t, g.out.Err, ErrUnavailable)
	assert.ErrorIs(t, g.out.Err, context.Canceled)
}
