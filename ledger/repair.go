package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/stored"
)

// forked tells whether an event set aside, its fields as read orig, is of
// another history than the ledger's, whose head digest is head: as read,
// it does not chain on head. A note then changes nothing: only an event
// whose digest a change (--fields) broke is applied changed. An event
// unreadable as read is not known to be forked.
func forked(head string, orig map[string]string) bool {
	ev, err := stored.ParseEvent(orig)
	return err == nil && stored.Digest(head, ev) != ev.Digest
}

// ErrNotSetAside is Repair's error for a row that is not an event set aside
// and unresolved.
var ErrNotSetAside = errors.New("no unresolved event set aside with this id")

// Repair applies an event set aside (its ledger.set_aside row id) and then
// its holder's events parked behind it, and marks the row resolved with note,
// all in one transaction. fields nil applies the event as it was read, for a
// cause since removed on PostgreSQL's side. Otherwise fields are the event
// corrected (a memo PostgreSQL cannot store, say): same holder, seq and
// digest, since the holder's later events chain on that digest; an event
// whose digest no longer matches its fields is applied only with a note,
// which the row keeps as the record that the ledger holds the event changed,
// and only when its fields as read chained on the ledger's head: one that
// did not is of a forked history, never applied.
// The event must be its holder's next in the ledger.
func (l *Ledger) Repair(ctx context.Context, id int64, fields map[string]string, note string) (Report, error) {
	var rep Report
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		rep = Report{}
		var holder string
		var seq int64
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT holder, seq, fields FROM ledger.set_aside WHERE id = $1 AND resolved_at IS NULL FOR UPDATE`, id).
			Scan(&holder, &seq, &raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("set aside %d: %w", id, ErrNotSetAside)
		}
		if err != nil {
			return err
		}
		var orig map[string]string
		if err := json.Unmarshal(raw, &orig); err != nil {
			return fmt.Errorf("set aside %d: fields: %w", id, err)
		}
		if fields == nil {
			fields = orig
		}
		ev, err := stored.ParseEvent(fields)
		if err == nil {
			err = checkEvent(ev)
		}
		if err != nil {
			return fmt.Errorf("set aside %d: %w", id, err)
		}
		if ev.Holder != holder || ev.Seq != seq || ev.Digest != orig[stored.EventDigest] {
			return fmt.Errorf("set aside %d: the event must keep holder %q, seq %d and digest %q", id, holder, seq, orig[stored.EventDigest])
		}
		heads, err := lockHeads(ctx, tx, []string{holder})
		if err != nil {
			return err
		}
		hd := heads[holder]
		if ev.Seq != hd.seq+1 {
			return fmt.Errorf("set aside %d: holder %s is at seq %d in the ledger: seq %d cannot apply next", id, holder, hd.seq, ev.Seq)
		}
		changed := !maps.Equal(fields, orig)
		if got := stored.Digest(hd.digest, ev); got != ev.Digest {
			why := fmt.Sprintf("set aside %d: the digest does not chain (sha1(previous %q, event) is %s, the event says %s)", id, hd.digest, got, ev.Digest)
			switch {
			case forked(hd.digest, orig):
				return fmt.Errorf("%s, and did not as it was read: the event is of another history, which no note mends "+
					"(engined rebuild --holder %s --force takes the ledger's; then resolve the row by hand)", why, holder)
			case note == "":
				return fmt.Errorf("%s: give a note to apply it changed", why)
			}
		}
		if changed && note == "" {
			return fmt.Errorf("set aside %d: the event is changed: give a note to say why", id)
		}
		w := newBatchWrites()
		parked, err := loadParked(ctx, tx, []string{holder}, w)
		if err != nil {
			return err
		}
		w.apply(&hd, ev)
		rep.Applied++
		l.applyHolder(w, &rep, holder, hd, parked[holder]) // sets the holder's new head
		if err := l.checkDuplicates(ctx, tx, w, &rep); err != nil {
			return err
		}
		rep.Refused, rep.SetAside = len(w.refuse), len(w.setAside)
		if err := w.flush(ctx, tx); err != nil {
			return err
		}
		if note == "" {
			note = "applied as it was read"
		}
		_, err = tx.Exec(ctx, "UPDATE ledger.set_aside SET resolved_at = now(), resolution = $2 WHERE id = $1", id, pgText(note))
		return err
	})
	if err != nil {
		return Report{}, fmt.Errorf("ledger repair: %w", err)
	}
	l.count(rep)
	return rep, nil
}
