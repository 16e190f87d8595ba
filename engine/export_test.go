package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// TransferStep runs one step of transfer t's protocol as a driver would:
// "begin" (create the record), "prepare" (part i), "decide" (the commit
// point, committed), "commit" (part i; for a one-payer transfer, the payer's
// commit is its commit point). Once begun, the transfer takes the path its
// record names, whatever e's own configuration. Tests use it to stop a
// driver between two steps.
func (e *Engine) TransferStep(ctx context.Context, t instructions.Transfer, step string, i int) error {
	n, err := t.Normalize(e.assets)
	if err != nil {
		return err
	}
	n.Payer = e.payerOf(n)
	switch step {
	case "begin":
		body, _ := instructions.EncodeTransfer(t)
		_, _, err = e.begin(ctx, n, body, n.Payer)
		return err
	case "prepare", "commit":
		// As a driver does, the record says which path the transfer takes.
		rec := transferRecord{payer: -1}
		if r, err := e.transferScript(ctx, n.ID, "read"); err == nil && r.outcome == "found" {
			rec, n.Payer = r, r.payer
		}
		c := e.commitOf(n, n.Parts[i], rec)
		if step == "prepare" {
			p := e.callsOf(n, n.Parts[i], e.stepTTL(rec)).prepare
			if p == nil {
				return fmt.Errorf("transfer %s has one payer: its parts have no prepare", n.ID)
			}
			c = *p
		}
		out := e.runUntilKnown(ctx, []call{c})
		return out[0].Err
	case "decide":
		_, err = e.transferScript(ctx, n.ID, "decide", TransferCommitted, "", e.xferTimeout.Milliseconds())
		return err
	}
	return fmt.Errorf("unknown step %q", step)
}

// TransferStepIDs gives the instruction ids the engine makes for part i of
// transfer t: its prepare, commit and abort, and the id the abort's fence
// writes its record under.
func (e *Engine) TransferStepIDs(t instructions.Transfer, i int) (map[string]string, error) {
	n, err := t.Normalize(e.assets)
	if err != nil {
		return nil, err
	}
	n.Payer = e.payerOf(n)
	pc := e.callsOf(n, n.Parts[i], e.idemTTL)
	if n.Payer >= 0 {
		return map[string]string{"commit": pc.commit.n.ID}, nil
	}
	fence := strings.TrimPrefix(pc.prepare.keys[keyTx], cluster.Tx(n.Parts[i].Holder, ""))
	return map[string]string{"prepare": pc.prepare.n.ID, "commit": pc.commit.n.ID, "abort": pc.abort.n.ID, "fence": fence}, nil
}

// SetScriptTTL makes e hand the script ttl as its idempotency TTL argument,
// as it is, bypassing New: tests use it to see what the script does with a
// TTL the engine never sends.
func SetScriptTTL(e *Engine, ttl string) { e.idemTTL = ttl }

// GroupStats gives the calls Apply sent and the pipelines they went in.
func (e *Engine) GroupStats() (calls, pipelines int64) {
	return e.group.calls.Load(), e.group.pipelines.Load()
}

// GroupQueued gives the number of Apply calls waiting for a pipeline.
func (e *Engine) GroupQueued() int {
	e.group.mu.Lock()
	defer e.group.mu.Unlock()
	n := 0
	for _, q := range e.group.queues {
		n += len(q.calls)
	}
	return n
}

// LaneOf is the lane a credit of id reaches among count lanes.
func LaneOf(id string, count int) int { return laneOf(id, count) }

// Deduct takes amount of asset from holder's available balance, as a single
// debit with a fresh id: what a plain "deduct balance" script does, with this
// engine's checks and errors (HOLDER_NOT_FOUND, HOLDER_SUSPENDED,
// INSUFFICIENT_FUNDS, INVALID_AMOUNT for a zero or negative amount, and the
// codes of Apply). Each call is a new request: to retry one safely, use Apply
// with an id of your own.
func (e *Engine) Deduct(ctx context.Context, holder, asset, amount string) (instructions.Result, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return e.Apply(ctx, instructions.New("deduct-"+hex.EncodeToString(b[:]), holder).Debit(asset, amount))
}

// RecoverSlots makes one pass of r, as Recover does, over the indexes of
// slots alone. A test that must see its transfer recovered within a window
// uses it: a pass over every slot of the shared test cluster also takes up
// what earlier tests left due, and on a busy machine that took seconds.
func (r *Recovery) RecoverSlots(ctx context.Context, slots ...int) error {
	entries, _, err := r.e.dueEntries(ctx, r.w.key, r.w.o.Limit, func(s int) bool { return slices.Contains(slots, s) }, nil)
	_, err = r.w.pass(ctx, entries, err)
	return err
}
