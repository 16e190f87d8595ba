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

// An answer already in is read even when the caller's context has ended
// meanwhile: submitSets waits for its sets in order, and one it reads after
// another that outlived the deadline (a quick payment's claim) has long
// been answered (the payer's run). A select over both would drop it half
// the time.
func TestGrouped_AnAnswerInIsReadAfterTheContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := &grouped{done: make(chan struct{})}
	close(g.done)
	for range 100 {
		if !g.answered(ctx) {
			t.Fatal("an answer in was taken for none")
		}
	}
	if (&grouped{done: make(chan struct{})}).answered(ctx) {
		t.Fatal("no answer, and the context ended: not answered")
	}
}
