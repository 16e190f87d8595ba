package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// Finding kinds, per holder.
const (
	KindInFlight       = "in_flight"        // Redis ahead: events not in PostgreSQL yet, still in the outbox (not drift)
	KindLostInRelay    = "lost_in_relay"    // Redis ahead, and some of those events are neither in the outbox nor in PostgreSQL
	KindPGAhead        = "pg_ahead"         // Redis lost acknowledged writes
	KindMissingInRedis = "missing_in_redis" // PostgreSQL has it, Redis does not
	KindMismatch       = "mismatch"         // same seq, different figures or a lost expiry index entry
	KindDiverged       = "diverged"         // the ledger refused events of the holder, and the two differ
)

// Finding kinds, per transfer whose clearing account is not zero in the ledger.
const (
	KindTransferInFlight   = "transfer_in_flight"  // its parts' events are on their way (not drift)
	KindTransferUnbalanced = "transfer_unbalanced" // past the timeout, and nothing on its way
)

// TransferFinding is a transfer whose clearing account the ledger does not
// have at zero.
type TransferFinding struct {
	ledger.TransferBalance
	Kind string `json:"kind"`
	// What the Redis record says: Status "" when Redis no longer has it
	// (finished longer ago than the idempotency TTL, or lost).
	Status   string `json:"status"`
	Complete bool   `json:"complete"`
	AgeMs    int64  `json:"age_ms"` // since the record was created (else the first part in the ledger)
}

// Finding is one holder that is not in sync. A lane of a hot holder is a
// holder of its own (X#i): its finding names the hot holder and the lane,
// and comes right after the hot holder's own (names sort so).
type Finding struct {
	Holder     string   `json:"holder"`
	Parent     string   `json:"parent,omitempty"` // the hot holder whose lane Holder is
	Lane       int      `json:"lane,omitempty"`   // Holder's lane, 1 to 63 (lane 0 is the hot holder itself)
	Kind       string   `json:"kind"`
	RedisSeq   int64    `json:"redis_seq"`
	LedgerSeq  int64    `json:"ledger_seq"`
	InFlight   int64    `json:"in_flight,omitempty"`
	Lost       int64    `json:"lost,omitempty"`      // lost_in_relay: how many events
	LostSeqs   []int64  `json:"lost_seqs,omitempty"` // lost_in_relay: their seqs, the first maxLostSeqs
	Difference []string `json:"difference,omitempty"`
}

// Report is what Run found; engined reconcile writes it as JSON.
type Report struct {
	StartedAt      time.Time         `json:"started_at"`
	DurationMs     int64             `json:"duration_ms"`
	Holders        int               `json:"holders"`
	InSync         int               `json:"in_sync"`
	EventsInFlight int64             `json:"events_in_flight"`
	Counts         map[string]int    `json:"counts"` // per finding kind, of holders and of transfers
	Findings       []Finding         `json:"findings"`
	Transfers      []TransferFinding `json:"transfers"`
	// The books, audited over the entries written since the last clean
	// audit (ledger.Audit): how many that was, and what was wrong.
	AuditedEntries int64                 `json:"audited_entries"`
	AuditWhole     bool                  `json:"audit_whole_history"`
	Unbalanced     []ledger.Imbalance    `json:"unbalanced"`
	AccountDrift   []ledger.AccountDrift `json:"account_drift"`
	Refused        map[string]int64      `json:"refused_events"`
	Parked         int64                 `json:"parked_events"`
	Drift          bool                  `json:"drift"`

	// Events the ledger set aside, not resolved: each stalls its holder (drift).
	SetAside []ledger.SetAsideEvent `json:"set_aside"`
}

// Options tune Run. A nil *Options means the defaults.
type Options struct {
	// TransferTimeout is how long a transfer may take to balance in the
	// ledger before it counts as drift. Default engine.DefaultTransferTimeout.
	TransferTimeout time.Duration
	// Progress, when set, is called after each batch of holders with how
	// many were compared out of how many. Default none.
	Progress func(done, total int)
}

// batchSize is how many holders are read from each side at once.
const batchSize = 1000

// betweenReads, when set, runs between reading a batch of holders from the
// ledger and from Redis: a test lets the relay commit there, to hold the
// read order to what it must be.
var betweenReads func()

// Run compares every holder of Redis and of the ledger, then the transfers
// whose clearing account is not zero, then audits the ledger's own books
// over what was written since the last clean audit. Its cost follows the
// holders and what is unsettled or new, not the ledger's history.
//
// Errors: Redis's (engine.ErrUnavailable) and PostgreSQL's; a report is
// returned only whole.
func Run(ctx context.Context, eng *engine.Engine, led *ledger.Ledger, opt *Options) (*Report, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.TransferTimeout <= 0 {
		o.TransferTimeout = engine.DefaultTransferTimeout
	}
	rep := &Report{StartedAt: time.Now().UTC(), Counts: map[string]int{}, Findings: []Finding{}, Transfers: []TransferFinding{}}
	names := map[string]struct{}{}
	pgHolders, err := led.Holders(ctx)
	if err != nil {
		return nil, err
	}
	for _, h := range pgHolders {
		names[h] = struct{}{}
	}
	if err := eng.Holders(ctx, func(hs []string) error {
		for _, h := range hs {
			names[h] = struct{}{}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("redis holders: %w", err)
	}
	// Read first: a holder the ledger refused events of is judged by it.
	if rep.Refused, err = led.RefusedCount(ctx); err != nil {
		return nil, err
	}
	all := slices.Sorted(maps.Keys(names))
	rep.Holders = len(all)
	for lo := 0; lo < len(all); lo += batchSize {
		batch := all[lo:min(lo+batchSize, len(all))]
		// The ledger first: it only ever holds what Redis applied, so a
		// relay commit between the two reads makes Redis look ahead (in
		// flight, checked below), never the ledger (lost writes).
		fromPG, err := led.Snapshots(ctx, batch, 0)
		if err != nil {
			return nil, err
		}
		if betweenReads != nil {
			betweenReads()
		}
		fromRedis, err := eng.Snapshots(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		var found []Finding
		inSync := map[string]*stored.Snapshot{}
		alike := map[string]Finding{}
		for _, h := range batch {
			fd, ok := compareHolder(h, fromRedis[h], fromPG[h], rep.Refused[h] > 0)
			if !ok {
				if fromRedis[h] != nil {
					inSync[h], alike[h] = fromRedis[h], fd
				}
				continue
			}
			found = append(found, fd)
		}
		// Figures alike, a hold the expiry index has lost would still never
		// be released: a mismatch, as rebuild judges it.
		lost, err := eng.LostExpiries(ctx, inSync)
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		rep.InSync += len(batch) - len(found) - len(lost)
		for _, h := range slices.Sorted(maps.Keys(lost)) {
			fd := alike[h]
			fd.Kind, fd.Difference = KindMismatch, lost[h]
			found = append(found, fd)
		}
		if err := checkInFlight(ctx, eng, led, found); err != nil {
			return nil, err
		}
		for _, fd := range found {
			rep.Counts[fd.Kind]++
			rep.EventsInFlight += fd.InFlight
			rep.Findings = append(rep.Findings, fd)
			if fd.Kind != KindInFlight {
				rep.Drift = true
			}
		}
		if o.Progress != nil {
			o.Progress(lo+len(batch), len(all))
		}
	}
	if err := reconcileTransfers(ctx, eng, led, rep, o.TransferTimeout); err != nil {
		return nil, err
	}
	audit, err := led.Audit(ctx, 100)
	if err != nil {
		return nil, err
	}
	rep.Unbalanced, rep.AccountDrift = audit.Unbalanced, audit.AccountDrift
	rep.AuditedEntries, rep.AuditWhole = audit.Entries, audit.Whole
	if rep.Parked, err = led.Gaps(ctx); err != nil {
		return nil, err
	}
	if rep.SetAside, err = led.SetAside(ctx, 1000); err != nil {
		return nil, err
	}
	if len(rep.Unbalanced) > 0 || len(rep.AccountDrift) > 0 || len(rep.Refused) > 0 || len(rep.SetAside) > 0 {
		rep.Drift = true
	}
	rep.DurationMs = time.Since(rep.StartedAt).Milliseconds()
	return rep, nil
}

// reconcileTransfers judges the transfers whose clearing account is not zero
// in the ledger, after the holders (it needs to know which are in flight).
//
// A non-zero clearing account means that some parts' commits are in the
// ledger and others are not. That is normal for a while: the record may not
// be complete yet (the other parts are still being committed in Redis), or
// the other parts' events may not have been relayed yet. So such a transfer
// is in flight while it is younger than the timeout, whatever its record
// says. Past the timeout it stays in flight only while one of its holders
// (those the Redis record names, and those of the parts the ledger has
// seen) has events on their way; else it is unbalanced: a part's commit is
// lost, or the transfer is stuck unfinished.
func reconcileTransfers(ctx context.Context, eng *engine.Engine, led *ledger.Ledger, rep *Report, timeout time.Duration) error {
	open, err := led.UnsettledTransfers(ctx, 1000)
	if err != nil {
		return err
	}
	ahead := map[string]bool{}
	for _, fd := range rep.Findings {
		if fd.Kind == KindInFlight {
			parent, _ := instructions.ParentOf(fd.Holder) // a transfer names a hot holder, not its lane
			ahead[fd.Holder], ahead[parent] = true, true
		}
	}
	// Ages are measured on this host's clock against the record's Redis
	// server time: clocks apart by a good part of the timeout blur them.
	now := time.Now().UnixMilli()
	for _, t := range open {
		fd := TransferFinding{TransferBalance: t, Kind: KindTransferUnbalanced}
		created, holders := t.FirstMs, t.Holders
		st, err := eng.GetTransfer(ctx, t.Transfer)
		switch {
		case err == nil:
			fd.Status, fd.Complete, created = st.Status, st.Complete, st.CreatedMs
			holders = append(slices.Clone(holders), st.Holders...)
		case !errors.Is(err, engine.ErrTransferNotFound):
			return fmt.Errorf("transfer %s: %w", t.Transfer, err)
		}
		fd.AgeMs = now - created
		if fd.AgeMs < timeout.Milliseconds() || slices.ContainsFunc(holders, func(h string) bool { return ahead[h] }) {
			fd.Kind = KindTransferInFlight
		} else {
			rep.Drift = true
		}
		rep.Counts[fd.Kind]++
		rep.Transfers = append(rep.Transfers, fd)
	}
	return nil
}

// maxLostSeqs bounds the seqs a lost_in_relay finding lists.
const maxLostSeqs = 100

// checkInFlight turns an in_flight finding into lost_in_relay when some of
// the events that make Redis ahead are on their way no more: neither in the
// holder's outbox (where they wait, read or not, until the ledger committed
// them) nor in the ledger. The outbox is read after the holder's state, and
// the ledger again after the outbox: an event the relay delivered meanwhile
// left the outbox only once the ledger had it, so it is found there.
func checkInFlight(ctx context.Context, eng *engine.Engine, led *ledger.Ledger, found []Finding) error {
	var ahead []string
	for _, fd := range found {
		if fd.Kind == KindInFlight {
			ahead = append(ahead, fd.Holder)
		}
	}
	if len(ahead) == 0 {
		return nil
	}
	queued, err := eng.Undelivered(ctx, ahead)
	if err != nil {
		return fmt.Errorf("redis outbox: %w", err)
	}
	arrived, err := led.Arrivals(ctx, ahead)
	if err != nil {
		return err
	}
	for i := range found {
		fd := &found[i]
		if fd.Kind != KindInFlight {
			continue
		}
		for seq := fd.LedgerSeq + 1; seq <= fd.RedisSeq; seq++ {
			if queued[fd.Holder][seq] || arrived[fd.Holder].Has(seq) {
				continue
			}
			fd.Lost++
			if len(fd.LostSeqs) < maxLostSeqs {
				fd.LostSeqs = append(fd.LostSeqs, seq)
			}
		}
		if fd.Lost > 0 {
			fd.Kind, fd.InFlight = KindLostInRelay, 0
		}
	}
	return nil
}

// compareHolder compares one holder; differ is false when both sides agree.
// refused tells that the ledger refused events of the holder: if Redis has
// the holder at another seq or digest, their histories forked (Redis
// applied events that do not chain on the ledger's, typically after a
// failover lost events the ledger had), whatever the seqs say: Redis being
// ahead is then no longer events in flight, as the ledger will refuse them.
func compareHolder(h string, r *stored.Snapshot, p *stored.Snapshot, refused bool) (fd Finding, differ bool) {
	fd, differ = compareState(h, r, p)
	if differ && refused && r != nil && (p == nil || r.Seq != p.Seq || r.Digest != p.Digest) {
		fd.Kind, fd.InFlight = KindDiverged, 0
	}
	return fd, differ
}

// compareState compares one holder's seq and state on both sides.
func compareState(h string, r *stored.Snapshot, p *stored.Snapshot) (Finding, bool) {
	fd := Finding{Holder: h}
	if p, lane := instructions.ParentOf(h); lane > 0 {
		fd.Parent, fd.Lane = p, lane
	}
	if r != nil {
		fd.RedisSeq = r.Seq
	}
	if p != nil {
		fd.LedgerSeq = p.Seq
	}
	switch {
	case r == nil && p == nil:
		return fd, false
	case r == nil:
		fd.Kind = KindMissingInRedis
	case p != nil && len(r.Unreadable) > 0:
		// A value written outside the engine (its seq, maybe, read as 0):
		// the seqs tell nothing, what Redis has is the finding.
		fd.Kind, fd.Difference = KindMismatch, stored.Differences(r, p, "ledger")
	case fd.RedisSeq > fd.LedgerSeq:
		fd.Kind, fd.InFlight = KindInFlight, fd.RedisSeq-fd.LedgerSeq
	case fd.LedgerSeq > fd.RedisSeq:
		fd.Kind = KindPGAhead
	default:
		// stored.Differences, not a copy here: Restore refuses by the same
		// comparison, so rebuild and reconcile agree on what a mismatch is.
		fd.Difference = stored.Differences(r, p, "ledger")
		if len(fd.Difference) == 0 {
			return fd, false
		}
		fd.Kind = KindMismatch
	}
	return fd, true
}
