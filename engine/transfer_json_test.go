package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// transferPrintOrig is the first implementation of transferPrint.
func transferPrintOrig(n instructions.NormalizedTransfer) string {
	h := sha256.New()
	for _, p := range n.Parts {
		fmt.Fprintf(h, "%d:%s|", len(p.Holder), p.Holder)
		for _, s := range p.Steps {
			fmt.Fprintf(h, "%s|%s|%d|%d:%s|\n", s.Op, s.Asset, s.Units, len(s.Hold), s.Hold)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// The record keeps a transfer's print, and a transfer sent again is told
// apart by it: transferPrint may compute differently, never answer
// differently, on any parts (even invalid ones, even larger than its
// buffer on the stack).
func TestTransferPrint_AsTheFirstImplementation(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	str := func() string {
		b := make([]byte, r.IntN(4)*r.IntN(60))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	for range randomRounds(5000) {
		var n instructions.NormalizedTransfer
		for range r.IntN(17) {
			p := instructions.Normalized{Holder: str()}
			for range r.IntN(20) {
				p.Steps = append(p.Steps, instructions.Step{Op: str(), Asset: str(), Units: r.Int64() - r.Int64(), Hold: str()})
			}
			n.Parts = append(n.Parts, p)
		}
		// Lanes are printed as their holders (printedHolder), on both sides.
		orig := n
		orig.Parts = slices.Clone(n.Parts)
		for i := range orig.Parts {
			orig.Parts[i].Holder = printedHolder(orig.Parts[i].Holder)
		}
		require.Equal(t, transferPrintOrig(orig), transferPrint(n), "%+v", n)
	}
}

// A settle without an amount is another body than one that names the units
// it comes to, and a whole hold another than a leg: their prints differ.
func TestTransferPrint_TellsASettleWithoutAnAmount(t *testing.T) {
	of := func(rest int8) string {
		return transferPrint(instructions.NormalizedTransfer{Parts: []instructions.Normalized{{Holder: "a",
			Steps: []instructions.Step{{Op: instructions.OpSettle, Asset: "USDT", Units: 100, Hold: "ord-1", Rest: rest}}}}})
	}
	named, leg, hold := of(0), of(instructions.RestLeg), of(instructions.RestHold)
	assert.NotEqual(t, named, leg)
	assert.NotEqual(t, named, hold)
	assert.NotEqual(t, leg, hold)
}

// TestTransferState_AppendJSONIsMarshal: the daemon's answer to a transfer
// is what json.Marshal writes of its state, byte for byte.
func TestTransferState_AppendJSONIsMarshal(t *testing.T) {
	part := 1
	for _, s := range []string{"", "pay-1", `q"uote`, "<a&b>", "\x00\n\u2028", "\xff"} {
		for _, st := range []TransferState{
			{},
			{ID: s, Status: TransferCommitted, Complete: true, Holders: []string{"alice", s}, CreatedMs: 1796000000000},
			{ID: s, Status: TransferPending, Replayed: true, Holders: []string{}, CreatedMs: -1},
			{ID: s, Status: TransferAborted, Complete: true, Holders: []string{s}, PartIndex: &part,
				Error: &instructions.Error{ID: s, Code: instructions.CodeInsufficientFunds, OpIndex: 0, Message: s}},
			{ID: s, Status: TransferAborted, Error: &instructions.Error{Code: instructions.CodeUnavailable,
				OpIndex: instructions.NoOp, Message: "late " + s, Replayed: true}},
		} {
			want, err := json.Marshal(st)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(st.AppendJSON(nil)))
		}
	}
}
