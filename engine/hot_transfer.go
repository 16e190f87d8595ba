package engine

import (
	"context"
	"strings"
	"time"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// maxCachedLanes bounds the lane cache, which a transfer fills with its
// payees, plain ones too: past it, the cache starts again empty.
const maxCachedLanes = 100_000

// routeParts sends each credit-only part of n to a hot payee's lane picked
// by the transfer's id. The counts are the cached ones, read again when
// older than laneCacheTTL; a count read late only spreads credits less: the
// record keeps the lanes the parts went to (pinLanes), whatever count an
// engine knows later.
func (e *Engine) routeParts(ctx context.Context, n *instructions.NormalizedTransfer) {
	var stale []int
	for i, p := range n.Parts {
		if l, ok := e.lanes.get(p.Holder); !creditOnly(p) || ok && time.Since(l.read) < laneCacheTTL {
			continue
		}
		stale = append(stale, i)
	}
	if len(stale) > 0 {
		reqs := make([]req, len(stale))
		for j, i := range stale {
			k := cluster.Holder(n.Parts[i].Holder)
			reqs[j] = req{keys: []string{k}, args: []any{"hmget", k, stored.FieldLanes, stored.FieldLanesHist}}
		}
		if e.lanes.size() > maxCachedLanes {
			e.lanes.reset()
		}
		for j, got := range e.submit(ctx, reqs) {
			v, err := got.cmd.Slice()
			if err != nil {
				// Sent to lane 0, uncached: any lane takes a transfer's
				// credit, and the part's own call reports what is wrong.
				continue
			}
			e.learnLanes(ctx, n.Parts[stale[j]].Holder, v)
		}
	}
	for i, p := range n.Parts {
		if l, ok := e.lanes.get(p.Holder); ok && l.count > 1 && creditOnly(p) {
			n.Parts[i].Holder = instructions.LaneHolder(p.Holder, laneOf(n.ID, l.count))
		}
	}
}

// pinLanes gives n's parts the lanes its record names (holders, as the
// record keeps them): those the transfer's first driver sent them to. It
// tells whether any part moved.
func pinLanes(n *instructions.NormalizedTransfer, holders string) bool {
	hs := strings.Split(holders, ",")
	if len(hs) != len(n.Parts) {
		return false
	}
	moved := false
	for i, h := range hs {
		p := &n.Parts[i]
		parent, _ := instructions.ParentOf(h)
		if own, _ := instructions.ParentOf(p.Holder); h != p.Holder && parent == own {
			p.Holder, moved = h, true
		}
	}
	return moved
}
