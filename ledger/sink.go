package ledger

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// Report tells what one Write did with its batch.
type Report struct {
	Applied    int // events applied (parked ones applied once their gap filled included)
	Duplicates int // events already applied, skipped
	Conflicts  int // duplicates whose digest differs from the one applied (also refused)
	Parked     int // events parked behind a gap
	Unparked   int // parked events applied
	Refused    int // duplicates refused as conflicts (recorded in ledger.refused)
	SetAside   int // events set aside (recorded in ledger.set_aside); their holders wait behind them
}

// Write applies a batch of outbox events in one transaction; see the
// package documentation. It returns nil once the whole batch is committed:
// the caller may then delete the events from Redis. An entry the relay could
// not read as an event (Err set) is set aside with its fields, stream and
// entry id. It is the sink the relay writes to.
func (l *Ledger) Write(ctx context.Context, batch []stored.Entry) error {
	_, err := l.Apply(ctx, batch)
	return err
}

// head is where a holder's history stands in the ledger.
type head struct {
	exists    bool
	seq       int64
	digest    string
	status    string
	lanes     int // a hot holder's lane count, 1 for a plain one
	createdMs int64
	updatedMs int64
}

// pending is an event waiting in a batch: from the batch itself or from
// ledger.parked.
type pending struct {
	ev     stored.Event
	parked bool
	entry  stored.Entry // as read; no stream for a parked event
}

// acctKey names an account: owner is the holder, or the counterparty for kind cp.
type acctKey struct{ owner, kind, asset string }
type itemKey struct{ holder, name string }

// clearKey names a transfer's clearing sum in one asset.
type clearKey struct{ transfer, asset string }

// batchWrites collects the rows of one batch.
type batchWrites struct {
	instructions [][]any
	entries      [][]any
	deltas       map[acctKey]*big.Int
	own          map[acctKey]*big.Int  // the event apply is on: what it nets on each of the holder's own accounts
	clearing     map[clearKey]*big.Int // what the batch adds to ledger.transfer_clearing
	heads        map[string]head
	coupons      map[itemKey]string
	holds        map[itemKey]*string // nil: closed
	park         [][]any             // holder, seq, fields
	unpark       [][2]any            // holder, seq
	refuse       [][]any             // holder, seq, reason, fields
	setAside     [][]any             // holder, seq, stream, entry, fields, reason
	dupChecks    []stored.Event      // duplicates below the head, to compare with what was applied
}

// newBatchWrites makes an empty batch, every map ready: apply writes to
// them all, whatever writes the batch (the sink, a repair).
func newBatchWrites() *batchWrites {
	return &batchWrites{deltas: map[acctKey]*big.Int{}, own: map[acctKey]*big.Int{}, clearing: map[clearKey]*big.Int{},
		heads: map[string]head{}, coupons: map[itemKey]string{}, holds: map[itemKey]*string{}}
}

// Apply is Write, telling what it did.
//
// The batch goes in one transaction. If PostgreSQL refuses it for what an
// event holds (refusedByData), one event must not hold back the others: the
// batch is split by holder and applied in halves, down to the one holder
// whose events fail, whose events are then applied one at a time; the one
// PostgreSQL refuses alone is set aside, and the holder's later events park
// behind it (their seq is past the holder's next). Any other failure (the
// server down, a deadlock) fails the write, to be retried whole.
func (l *Ledger) Apply(ctx context.Context, batch []stored.Entry) (Report, error) {
	rep, err := l.applyTx(ctx, batch, allParked)
	if err == nil || !refusedByData(err) {
		return rep, err
	}
	byHolder := map[string][]stored.Entry{}
	for _, e := range batch {
		byHolder[e.Fields[stored.EventHolder]] = append(byHolder[e.Fields[stored.EventHolder]], e)
	}
	holders := make([]string, 0, len(byHolder))
	for h := range byHolder {
		holders = append(holders, h)
	}
	sort.Strings(holders)
	groups := make([][]stored.Entry, len(holders))
	for i, h := range holders {
		groups[i] = byHolder[h]
	}
	rep = Report{}
	if err := l.isolate(ctx, groups, &rep, true); err != nil {
		return rep, err
	}
	return rep, nil
}

func (r *Report) add(o Report) {
	r.Applied += o.Applied
	r.Duplicates += o.Duplicates
	r.Conflicts += o.Conflicts
	r.Parked += o.Parked
	r.Unparked += o.Unparked
	r.Refused += o.Refused
	r.SetAside += o.SetAside
}

// beyondContract refuses an event that no instruction can write, such as an
// entry added to an outbox by hand: a holder that is no id but for the
// lane separator (the engine's, in its lanes' names X#i, which the ledger
// reads itself), such as one with a brace or a space, which no read could
// name and rebuild would write back into Redis; or a memo over the
// contract's bytes, which every read would serve whole.
func beyondContract(ev stored.Event) error {
	if !instructions.ValidID(strings.ReplaceAll(ev.Holder, instructions.LaneSeparator, "")) {
		return fmt.Errorf("event: holder %q is no id", clip(ev.Holder))
	}
	if len(ev.Memo) > instructions.MaxMemo {
		return fmt.Errorf("event %s/%d: memo of %d bytes, at most %d", ev.Holder, ev.Seq, len(ev.Memo), instructions.MaxMemo)
	}
	return nil
}

// applyTx applies a batch in one transaction.
func (l *Ledger) applyTx(ctx context.Context, batch []stored.Entry, parkedLimit int) (Report, error) {
	var rep Report
	w := newBatchWrites()
	byHolder := map[string][]pending{}
	for _, e := range batch {
		ev, err := e.Read()
		if err == nil {
			err = beyondContract(ev)
		}
		if err != nil {
			w.addSetAside(e, "malformed: "+err.Error())
			continue
		}
		byHolder[ev.Holder] = append(byHolder[ev.Holder], pending{ev: ev, entry: e})
	}
	// A consistent lock order: two sinks locking the same holders cannot deadlock.
	holders := make([]string, 0, len(byHolder))
	for h := range byHolder {
		holders = append(holders, h)
	}
	sort.Strings(holders)

	malformed := len(w.setAside)
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		rep = Report{}
		clear(w.deltas)
		clear(w.clearing)
		w.instructions, w.entries, w.park, w.unpark, w.dupChecks, w.refuse = nil, nil, nil, nil, nil, nil
		w.setAside = w.setAside[:malformed]
		clear(w.heads)
		clear(w.coupons)
		clear(w.holds)

		heads, err := lockHeads(ctx, tx, holders)
		if err != nil {
			return err
		}
		parked, err := loadParked(ctx, tx, holders, w)
		if err != nil {
			return err
		}
		if parkedLimit != allParked {
			for h, p := range parked {
				parked[h] = p[:min(parkedLimit, len(p))]
			}
		}
		for _, h := range holders {
			evs := append(append([]pending(nil), byHolder[h]...), parked[h]...)
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].ev.Seq < evs[j].ev.Seq })
			l.applyHolder(w, &rep, h, heads[h], evs)
		}
		if err := l.checkDuplicates(ctx, tx, w, &rep); err != nil {
			return err
		}
		return w.flush(ctx, tx)
	})
	if err != nil {
		return Report{}, fmt.Errorf("ledger write: %w", err)
	}
	rep.Refused = len(w.refuse)
	rep.SetAside = len(w.setAside)
	l.count(rep)
	for _, r := range w.refuse {
		l.log.Warn("ledger: event refused", "holder", r[0], "seq", r[1], "reason", r[2])
	}
	for _, r := range w.setAside {
		l.log.Warn("ledger: event set aside, its holder waits behind it", "holder", r[0], "seq", r[1], "stream", r[2], "entry", r[3], "reason", r[5])
	}
	if len(w.park) > 0 {
		// One line a batch: a relay catching up after a reordering parks many.
		l.log.Info("ledger: events parked behind a gap until the missing ones arrive",
			"events", len(w.park), "first_holder", w.park[0][0], "first_seq", w.park[0][1])
	}
	return rep, nil
}

func (l *Ledger) count(r Report) {
	s := &l.stats
	s.batches.Add(1)
	s.applied.Add(int64(r.Applied))
	s.duplicates.Add(int64(r.Duplicates))
	s.conflicts.Add(int64(r.Conflicts))
	s.parked.Add(int64(r.Parked))
	s.unparked.Add(int64(r.Unparked))
	s.refused.Add(int64(r.Refused))
	s.setAside.Add(int64(r.SetAside))
}

// holderLockClass is the first key of the advisory locks lockHeads takes
// per holder (the second is a hash of the holder's name), apart from the
// one-key locks of migrations and audits.
const holderLockClass = 0x61746c68 // "atlh"

// unchained begins the reason of an event set aside because its digest does
// not chain on its holder's: the mark of a history other than the ledger's
// (RefusedCount).
const unchained = "digest does not chain"

// lockHeads locks the holders and reads their heads. Each holder is locked
// by an advisory lock (in key order: two batches never wait in a cycle) held
// to the end of the transaction, whether it has a row or not: two sinks
// writing a new holder's first events at once (two relays) wait for each
// other, where a row lock would let the one with seq 2, not seeing seq 1,
// park it while the one with seq 1, having read the parked events before,
// applied seq 1 alone, leaving seq 2 parked until the holder's next event.
// The heads are then read in a statement of their own, which sees what the
// sink that held the lock committed. Nothing but the sink writes a holder's
// row, so the read takes no row lock (a WAL record per row).
func lockHeads(ctx context.Context, tx pgx.Tx, holders []string) (heads map[string]head, err error) {
	// One round trip: the statements run one after the other, the read
	// taking its snapshot once the locks are held.
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($2, k) FROM (
			SELECT DISTINCT hashtext(h) AS k FROM unnest($1::text[]) AS u(h)) AS s ORDER BY k`, holders, int32(holderLockClass))
	b.Queue(`SELECT holder, seq, digest, status, lanes, created_ms, updated_ms FROM ledger.holders
		WHERE holder = ANY($1)`, holders)
	br := tx.SendBatch(ctx, b)
	defer func() { err = errors.Join(err, br.Close()) }()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	heads = map[string]head{}
	for rows.Next() {
		var h string
		hd := head{exists: true}
		if err := rows.Scan(&h, &hd.seq, &hd.digest, &hd.status, &hd.lanes, &hd.createdMs, &hd.updatedMs); err != nil {
			return nil, err
		}
		heads[h] = hd
	}
	return heads, rows.Err()
}

// loadParked reads the holders' parked events. One this sink cannot read
// (an older sink, which checked less, parked it) is set aside in w and leaves
// ledger.parked: failing the write instead would hold back every holder
// written with it, for good.
func loadParked(ctx context.Context, tx pgx.Tx, holders []string, w *batchWrites) (map[string][]pending, error) {
	rows, err := tx.Query(ctx, "SELECT holder, seq, fields FROM ledger.parked WHERE holder = ANY($1) ORDER BY holder, seq", holders)
	if err != nil {
		return nil, err
	}
	out := map[string][]pending{}
	for rows.Next() {
		var holder string
		var seq int64
		var f map[string]string
		if err := rows.Scan(&holder, &seq, &f); err != nil {
			return nil, err
		}
		ev, err := stored.ParseEvent(f)
		if err != nil {
			w.addSetAside(stored.Entry{Fields: f}, "malformed: parked: "+err.Error())
			w.unpark = append(w.unpark, [2]any{holder, seq})
			continue
		}
		out[ev.Holder] = append(out[ev.Holder], pending{ev: ev, parked: true, entry: stored.Entry{Fields: f}})
	}
	return out, rows.Err()
}

// applyHolder walks one holder's events in seq order from its head.
func (l *Ledger) applyHolder(w *batchWrites, rep *Report, holder string, hd head, evs []pending) {
	applied := map[int64]string{} // seq -> digest, of this batch
	for _, p := range evs {
		ev := p.ev
		switch {
		case ev.Seq <= hd.seq:
			if p.parked {
				w.unpark = append(w.unpark, [2]any{holder, ev.Seq})
			}
			rep.Duplicates++
			if d, ok := applied[ev.Seq]; ok || ev.Seq == hd.seq {
				if !ok {
					d = hd.digest
				}
				if d != ev.Digest {
					rep.Conflicts++
					w.refuse = append(w.refuse, []any{holder, ev.Seq, "conflict: differs from the event applied at this seq", ev.Fields()})
				}
			} else {
				w.dupChecks = append(w.dupChecks, ev)
			}
		case ev.Seq == hd.seq+1:
			if p.parked {
				w.unpark = append(w.unpark, [2]any{holder, ev.Seq})
			}
			if err := checkEvent(ev); err != nil {
				// Here, not when read: an older sink may have parked it.
				w.addSetAside(p.entry, "malformed: "+err.Error())
				continue
			}
			if got := stored.Digest(hd.digest, ev); got != ev.Digest {
				w.addSetAside(p.entry, fmt.Sprintf(unchained+": sha1(previous %q, event) is %s, the event says %s", hd.digest, got, ev.Digest))
				continue
			}
			w.apply(&hd, ev)
			applied[ev.Seq] = ev.Digest
			rep.Applied++
			if p.parked {
				rep.Unparked++
			}
		default:
			if p.parked {
				continue
			}
			if err := textOnly(ev); err != nil {
				// jsonb would keep U+FFFD in place of those bytes, and the
				// event would come back with a digest that does not chain,
				// which says the histories forked. In order, PostgreSQL
				// refuses it as not text: set it aside as that now.
				w.addSetAside(p.entry, "PostgreSQL cannot keep it: "+err.Error())
				continue
			}
			w.park = append(w.park, []any{holder, ev.Seq, ev.Fields()})
			rep.Parked++
		}
	}
	if hd.seq > 0 {
		w.heads[holder] = hd
	}
}

// apply adds one chained event's rows and moves the head.
func (w *batchWrites) apply(hd *head, ev stored.Event) {
	hd.seq, hd.digest, hd.updatedMs = ev.Seq, ev.Digest, ev.TS
	if ev.Seq == 1 {
		hd.createdMs = ev.TS
	}
	var xfer *string // NULL for an ordinary instruction
	if ev.Xfer != "" {
		xfer = &ev.Xfer
	}
	// dv: the digest version this event was verified by, so that its
	// digest can be checked again from its row.
	id, cp, memo := ev.ID, ev.CP, ev.Memo
	if partDerived(ev) {
		// ledger.events derives them (migration 7): the id from its step.
		id, cp, memo = ev.ID[len(ev.ID)-2:], "", ""
	}
	// checkEvent let only lowercase hexadecimal through.
	fp, _ := hex.DecodeString(ev.FP)
	digest, _ := hex.DecodeString(ev.Digest)
	w.instructions = append(w.instructions, []any{ev.Holder, ev.Seq, id, fp, ev.TS, cp, memo, compactOps(ev.Ops), compactState(ev.Seq, ev.State), digest, xfer, int16(max(ev.DV, stored.DigestV1))})
	n := 0
	clear(w.own)
	for i, op := range ev.ParsedOps() {
		switch op.Op {
		case "open", "resume":
			hd.status = "active"
		case "suspend":
			hd.status = "suspended"
		}
		if n, err := strconv.Atoi(op.Units); err == nil && (op.Op == "open" || op.Op == "set_lanes") && n > hd.lanes {
			hd.lanes = n
		}
		for _, mv := range op.Moves {
			units, _ := strconv.ParseInt(mv[3], 10, 64)
			for _, e := range [2]struct {
				side string
				amt  int64
			}{{mv[1], -units}, {mv[2], units}} {
				acct := acctKey{ev.Holder, e.side, mv[0]}
				var account *string // NULL: the holder's own account
				if e.side == stored.SideCP {
					acct.owner = ev.CP
					account = &ev.CP
				}
				w.entries = append(w.entries, []any{ev.Holder, ev.Seq, int16(n), int16(i), account, acct.kind, acct.asset, e.amt})
				n++
				if e.side == stored.SideCP && ev.Xfer != "" {
					// The clearing account's entries: ledger.transfer_balances'
					// clearing, kept per transfer and asset. Its sum there is
					// the clearing account's amount, which ledger.accounts
					// does not hold again (migration 7).
					addTo(w.clearing, clearKey{ev.Xfer, mv[0]}, e.amt)
				} else if e.side == stored.SideCP {
					addTo(w.deltas, acct, e.amt)
				} else {
					addTo(w.own, acct, e.amt)
				}
			}
		}
		// A hold an op names and the state lacks has closed; take and give
		// also name the hold their units go to.
		for _, h := range [2]string{op.Hold, op.To} {
			if h == "" {
				continue
			}
			if raw, ok := ev.ParsedState().Holds[h]; ok {
				w.holds[itemKey{ev.Holder, h}] = &raw
			} else {
				w.holds[itemKey{ev.Holder, h}] = nil
			}
		}
	}
	// Redis writes a holder's own field only when an instruction changes it:
	// one it credits and debits back to where it was (nothing, for a new
	// asset) it leaves as it was. So does the ledger, with the row.
	for k, net := range w.own {
		if net.Sign() != 0 {
			d := w.deltas[k]
			if d == nil {
				d = new(big.Int)
				w.deltas[k] = d
			}
			d.Add(d, net)
		}
	}
	for h, raw := range ev.ParsedState().Holds {
		w.holds[itemKey{ev.Holder, h}] = &raw
	}
	for c, raw := range ev.ParsedState().Coupons {
		w.coupons[itemKey{ev.Holder, c}] = raw
	}
}

// checkEvent refuses what the ledger cannot store as it does: a
// fingerprint or a digest that is not lowercase hexadecimal (docs/events.md;
// the ledger keeps the bytes they spell), and a transfer part whose
// counterparty is not its transfer's clearing account (docs/events.md,
// Transfer parts: the clearing sums of ledger.transfer_clearing are that
// account's amount).
func checkEvent(ev stored.Event) error {
	for _, f := range [2][2]string{{stored.EventFP, ev.FP}, {stored.EventDigest, ev.Digest}} {
		if b, err := hex.DecodeString(f[1]); err != nil || hex.EncodeToString(b) != f[1] {
			return fmt.Errorf("event %s/%d: %s %q is not lowercase hexadecimal", ev.Holder, ev.Seq, f[0], f[1])
		}
	}
	if ev.Xfer != "" && ev.CP != "x:"+ev.Xfer {
		return fmt.Errorf("event %s/%d: the counterparty of a part of transfer %q is %q, not its clearing account %q",
			ev.Holder, ev.Seq, ev.Xfer, ev.CP, "x:"+ev.Xfer)
	}
	return nil
}

// textOnly tells which field of an event, if any, holds bytes that are not
// UTF-8, which PostgreSQL's text and jsonb cannot keep.
func textOnly(ev stored.Event) error {
	f := ev.Fields()
	for _, k := range []string{stored.EventHolder, stored.EventID, stored.EventFP, stored.EventCP, stored.EventOps, stored.EventState,
		stored.EventDigest, stored.EventMemo, stored.EventXfer} {
		if !utf8.ValidString(f[k]) {
			return fmt.Errorf("field %q is not UTF-8", k)
		}
	}
	return nil
}

func addTo[K comparable](m map[K]*big.Int, k K, amt int64) {
	d := m[k]
	if d == nil {
		d = new(big.Int)
		m[k] = d
	}
	d.Add(d, big.NewInt(amt))
}

// checkDuplicates compares duplicates below the head with what was applied.
func (l *Ledger) checkDuplicates(ctx context.Context, tx pgx.Tx, w *batchWrites, rep *Report) error {
	if len(w.dupChecks) == 0 {
		return nil
	}
	hs, seqs := make([]string, len(w.dupChecks)), make([]int64, len(w.dupChecks))
	for i, ev := range w.dupChecks {
		hs[i], seqs[i] = ev.Holder, ev.Seq
	}
	rows, err := tx.Query(ctx, `SELECT i.holder, i.seq, encode(i.digest, 'hex') FROM ledger.instructions i
		JOIN unnest($1::text[], $2::bigint[]) AS d(holder, seq) USING (holder, seq)`, hs, seqs)
	if err != nil {
		return err
	}
	have := map[itemKey]string{}
	for rows.Next() {
		var h, d string
		var seq int64
		if err := rows.Scan(&h, &seq, &d); err != nil {
			return err
		}
		have[itemKey{h, strconv.FormatInt(seq, 10)}] = d
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ev := range w.dupChecks {
		if have[itemKey{ev.Holder, strconv.FormatInt(ev.Seq, 10)}] != ev.Digest {
			rep.Conflicts++
			w.refuse = append(w.refuse, []any{ev.Holder, ev.Seq, "conflict: differs from the event applied at this seq", ev.Fields()})
		}
	}
	return nil
}
