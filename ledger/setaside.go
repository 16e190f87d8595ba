package ledger

// An event the ledger cannot apply is set aside: found by halving the batch
// that failed, recorded with its reason, and its holder's later events
// parked behind it (docs/ledger.md, Events set aside).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/atomledger/atomledger/stored"
)

// isolate applies groups of a batch (each one holder's events) that failed
// together: each half in a transaction of its own, a failing half halved
// again, a single failing holder one event at a time. failed tells that these
// groups together already failed: no need to try them again as one.
func (l *Ledger) isolate(ctx context.Context, groups [][]stored.Entry, rep *Report, failed bool) error {
	if !failed {
		r, err := l.applyTx(ctx, slices.Concat(groups...), allParked)
		if err == nil {
			rep.add(r)
			return nil
		}
		if !refusedByData(err) {
			return err
		}
	}
	if len(groups) > 1 {
		mid := len(groups) / 2
		if err := l.isolate(ctx, groups[:mid], rep, false); err != nil {
			return err
		}
		return l.isolate(ctx, groups[mid:], rep, false)
	}
	evs := slices.Clone(groups[0])
	slices.SortStableFunc(evs, func(a, b stored.Entry) int { return cmp.Compare(entrySeq(a), entrySeq(b)) })
	for _, e := range evs {
		r, err := l.applyTx(ctx, []stored.Entry{e}, allParked)
		if err != nil && refusedByData(err) {
			// Without the holder's parked events, which follow it once it
			// fills their gap: one of those may be what PostgreSQL refuses.
			if r, err = l.applyTx(ctx, []stored.Entry{e}, 0); err == nil {
				err = l.isolateParked(ctx, e, &r)
			}
		}
		switch {
		case err == nil:
			rep.add(r)
		case !refusedByData(err):
			return err
		default:
			if err := l.setAsideOne(ctx, e, nil, "PostgreSQL refused it: "+err.Error()); err != nil {
				return err
			}
			rep.SetAside++
		}
	}
	return nil
}

// allParked is applyTx's parked limit that takes every parked event.
const allParked = -1

// isolateParked applies the events of e's holder parked behind it, e
// applied: one at a time, e sent again (a duplicate by then) to bring the
// next; the first PostgreSQL refuses is set aside, leaving ledger.parked,
// and the others stay parked behind it. Else the event that filled their
// gap would be the one set aside, and its repair refused for good.
func (l *Ledger) isolateParked(ctx context.Context, e stored.Entry, rep *Report) error {
	for {
		r, refusal := l.applyTx(ctx, []stored.Entry{e}, 1)
		if refusal == nil {
			rep.add(r)
			if r.Unparked == 0 {
				return nil // none left, or the rest behind another gap
			}
			continue
		}
		if !refusedByData(refusal) {
			return refusal
		}
		var holder string
		var seq int64
		var f map[string]string
		err := l.pool.QueryRow(ctx, `SELECT p.holder, p.seq, p.fields FROM ledger.parked p
			JOIN ledger.holders h USING (holder) WHERE p.holder = $1 AND p.seq > h.seq ORDER BY p.seq LIMIT 1`,
			e.Fields[stored.EventHolder]).Scan(&holder, &seq, &f)
		if err != nil {
			return fmt.Errorf("ledger set aside: a parked event: %w", err)
		}
		if err := l.setAsideOne(ctx, stored.Entry{Fields: f}, [][2]any{{holder, seq}}, "PostgreSQL refused it: "+refusal.Error()); err != nil {
			return err
		}
		rep.SetAside++
		return nil
	}
}

func entrySeq(e stored.Entry) int64 {
	n, _ := strconv.ParseInt(e.Fields[stored.EventSeq], 10, 64)
	return n
}

// refusedByData tells whether PostgreSQL refused a write for what it held,
// which no retry changes: a data exception (class 22: U+0000 or bytes that
// are not UTF-8 in text, U+0000 in jsonb, a number out of range), an
// integrity constraint (class 23), a program limit such as a row too big
// (class 54). A unique violation is left out: two sinks writing the same new
// holder at once could meet one before lockHeads locked holders without a
// row, and a retry finds such an event applied. Connection
// loss, shutdown, lack of resources, a deadlock or a permission error are
// not the event's doing: the batch is retried whole.
func refusedByData(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) != 5 {
		return false
	}
	switch pe.Code[:2] {
	case "22", "54":
		return true
	case "23":
		return pe.Code != "23505" // unique_violation
	}
	return false
}

// setAsideLock is the first key of the advisory locks (two int keys: a space
// of their own) that order two sinks' writes of one event set aside; the
// second is the hash of its holder and seq.
const setAsideLock = 0x61736964 // "asid"

// setAsideOne records one event PostgreSQL refused, in a transaction of its
// own: only the set_aside row, which takes any bytes, and, for a parked
// event, its row of ledger.parked gone (unpark: holder and seq).
func (l *Ledger) setAsideOne(ctx context.Context, e stored.Entry, unpark [][2]any, reason string) error {
	w := &batchWrites{unpark: unpark}
	w.addSetAside(e, reason)
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error { return w.flush(ctx, tx) })
	if err != nil {
		return fmt.Errorf("ledger set aside: %w", err)
	}
	l.stats.setAside.Add(1)
	l.log.Warn("ledger: event set aside, its holder waits behind it", "holder", w.setAside[0][0], "seq", w.setAside[0][1],
		"stream", e.Stream, "entry", e.ID, "reason", w.setAside[0][5])
	return nil
}

// addSetAside adds an event to set aside. The text columns take only what
// PostgreSQL's text can hold, the holder (indexed) only its first
// maxSetAsideHolder bytes; fields keeps every byte.
func (w *batchWrites) addSetAside(e stored.Entry, reason string) {
	seq, _ := strconv.ParseInt(e.Fields[stored.EventSeq], 10, 64)
	fields, _ := json.Marshal(e.Fields) // U+0000 becomes the escape \u0000
	holder := pgText(e.Fields[stored.EventHolder])
	if len(holder) > maxSetAsideHolder {
		holder = strings.ToValidUTF8(holder[:maxSetAsideHolder], "")
	}
	w.setAside = append(w.setAside, []any{holder, seq, pgText(e.Stream), pgText(e.ID), fields, pgText(reason)})
}

// maxSetAsideHolder is the most of its holder's name a set-aside row keeps:
// a name is at most 64 characters and a lane's suffix; one too long for an
// index entry (about 2.7 KB) made the set-aside row fail as its event had,
// and the whole write with it, stalling every holder of the round.
const maxSetAsideHolder = 1024

// pgText makes s storable as PostgreSQL text: valid UTF-8 without U+0000.
func pgText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
