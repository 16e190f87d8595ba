package stored

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Event is one outbox event: the fields of its stream entry (docs/events.md).
// Ops and State are kept verbatim, as the digest covers their exact text.
type Event struct {
	Holder string
	Seq    int64
	ID     string
	FP     string // fingerprint of the instruction's normalized body
	TS     int64  // server time, Unix ms
	CP     string
	Ops    string // JSON array of ops
	State  string // JSON of the touched accounts after the instruction
	Digest string
	Memo   string
	// Xfer is the transfer a part's instruction belongs to (docs/events.md),
	// "" for an ordinary instruction, whose event has no xfer field.
	Xfer string
	// DV is the digest version: DigestV2, or DigestV1 for an event without
	// a dv field (0 counts as DigestV1).
	DV int

	ops   []EventOp
	state Result // the state field: every touched account after the instruction
}

// EventOp is one op of an event, normalized, with its movements.
type EventOp struct {
	Op     string      `json:"op"`
	Asset  string      `json:"asset,omitempty"`
	Units  string      `json:"units,omitempty"`
	Hold   string      `json:"hold,omitempty"`
	Coupon string      `json:"coupon,omitempty"`
	Ms     string      `json:"ms,omitempty"`
	To     string      `json:"to,omitempty"` // take and give: the hold the units go to
	Moves  [][4]string `json:"mv,omitempty"` // asset, from, to, units; from/to among avail, frozen, cp
}

// Account sides a movement names.
const (
	SideAvail  = "avail"
	SideFrozen = "frozen"
	SideCP     = "cp"
)

// PointsAsset is the asset name of points in movements and accounts.
const PointsAsset = "points"

// Digest versions (docs/events.md, Digest). Events already in a ledger keep
// the version they were written with and still verify.
const (
	// DigestV1 joins the terms with "\n" and adds xfer only when set: a
	// memo holding "\n<id>" could pass for a transfer's xfer. Events
	// without a dv field.
	DigestV1 = 1
	// DigestV2 length-prefixes every term, xfer always: unambiguous. What
	// the library writes, with dv "2".
	DigestV2 = 2
)

// Fields of an outbox entry (docs/events.md).
const (
	EventHolder = "holder"
	EventSeq    = "seq"
	EventID     = "id"
	EventFP     = "fp"
	EventTS     = "ts"
	EventCP     = "cp"
	EventOps    = "ops"
	EventState  = "state"
	EventDigest = "digest"
	EventMemo   = "memo"
	EventXfer   = "xfer" // only in a transfer's part
	EventDV     = "dv"   // the digest version; absent: DigestV1
)

// eventFields are the fields of an outbox entry, all required; xfer and dv
// are the optional ones.
var eventFields = []string{EventHolder, EventSeq, EventID, EventFP, EventTS, EventCP, EventOps, EventState, EventDigest, EventMemo}

// HolderSeq reads the holder and seq of an outbox entry's fields as a Redis
// client gives them (a value that is not a string reads as ""); ok is false
// when the seq is not a number.
func HolderSeq(values map[string]any) (holder string, seq int64, ok bool) {
	holder, _ = values[EventHolder].(string)
	v, _ := values[EventSeq].(string)
	seq, err := strconv.ParseInt(v, 10, 64)
	return holder, seq, err == nil
}

// ParseEvent reads an outbox entry's fields and checks that they are well
// formed. It does not check the digest (the sink does, against the chain).
func ParseEvent(f map[string]string) (Event, error) {
	for _, k := range eventFields {
		if _, ok := f[k]; !ok {
			return Event{}, fmt.Errorf("event: no field %q", k)
		}
	}
	e := Event{Holder: f[EventHolder], ID: f[EventID], FP: f[EventFP], CP: f[EventCP], Ops: f[EventOps], State: f[EventState], Digest: f[EventDigest], Memo: f[EventMemo], Xfer: f[EventXfer]}
	switch dv, ok := f[EventDV]; {
	case !ok:
		e.DV = DigestV1
	case dv == "2":
		e.DV = DigestV2
	default:
		return e, fmt.Errorf("event: digest version %q", dv)
	}
	if x, ok := f[EventXfer]; ok && x == "" && e.DV == DigestV1 {
		// The library writes the field only for a transfer's part; under
		// version 1 an empty one would be digested as absent and come back
		// absent from Fields (under version 2, absent and empty are one).
		return e, errors.New("event: empty xfer")
	}
	if dv, ok := f[EventDV]; ok && dv != "2" {
		return e, fmt.Errorf("event: digest version %q", dv)
	}
	// seq and ts in their own digits only ("+3" and "03" parse as 3): Fields
	// and the digest write them so, and an event read back from them must
	// be the one read here.
	var err error
	if e.Seq, err = strconv.ParseInt(f[EventSeq], 10, 64); err != nil || e.Seq < 1 || strconv.FormatInt(e.Seq, 10) != f[EventSeq] {
		return e, fmt.Errorf("event: seq %q", f[EventSeq])
	}
	if e.TS, err = strconv.ParseInt(f[EventTS], 10, 64); err != nil || strconv.FormatInt(e.TS, 10) != f[EventTS] {
		return e, fmt.Errorf("event: ts %q", f[EventTS])
	}
	if e.Holder == "" || e.ID == "" {
		return e, errors.New("event: empty holder or id")
	}
	if err := json.Unmarshal([]byte(e.Ops), &e.ops); err != nil {
		return e, fmt.Errorf("event %s/%d: ops: %w", e.Holder, e.Seq, err)
	}
	if e.state, err = ParseResult(e.State); err != nil {
		return e, fmt.Errorf("event %s/%d: state: %w", e.Holder, e.Seq, err)
	}
	if e.state.Seq != f[EventSeq] {
		return e, fmt.Errorf("event %s/%d: state seq %q", e.Holder, e.Seq, e.state.Seq)
	}
	for h, raw := range e.state.Holds {
		// flush parses them: a malformed one must be refused here, with its event.
		if _, _, _, err := ParseHold(raw); err != nil {
			return e, fmt.Errorf("event %s/%d: state of hold %q: %w", e.Holder, e.Seq, h, err)
		}
	}
	for i, op := range e.ops {
		for _, mv := range op.Moves {
			if n, err := strconv.ParseInt(mv[3], 10, 64); err != nil || n <= 0 {
				return e, fmt.Errorf("event %s/%d op %d: movement units %q", e.Holder, e.Seq, i, mv[3])
			}
			if !side(mv[1]) || !side(mv[2]) || mv[1] == mv[2] || mv[0] == "" {
				return e, fmt.Errorf("event %s/%d op %d: movement %q", e.Holder, e.Seq, i, mv)
			}
		}
	}
	return e, nil
}

func side(s string) bool { return s == SideAvail || s == SideFrozen || s == SideCP }

// Fields gives the event back as the fields of an outbox entry.
func (e Event) Fields() map[string]string {
	f := map[string]string{EventHolder: e.Holder, EventSeq: strconv.FormatInt(e.Seq, 10), EventID: e.ID,
		EventFP: e.FP, EventTS: strconv.FormatInt(e.TS, 10), EventCP: e.CP, EventOps: e.Ops, EventState: e.State,
		EventDigest: e.Digest, EventMemo: e.Memo}
	if e.Xfer != "" {
		f[EventXfer] = e.Xfer
	}
	if e.DV == DigestV2 {
		f[EventDV] = "2"
	}
	return f
}

// ParsedOps gives the event's ops as ParseEvent read them.
func (e Event) ParsedOps() []EventOp { return e.ops }

// ParsedState gives the event's state as ParseEvent read it.
func (e Event) ParsedState() Result { return e.state }

// Entry is an outbox entry as the relay hands it to a sink: where it was
// read (its stream and entry id; none for an event not read from a stream)
// and the event, as ParseEvent read it from Fields. When Err is set, the
// fields are not an event (Event is then zero): a sink keeps such an entry,
// with its fields as they were, set aside rather than lose it.
type Entry struct {
	Stream, ID string
	Fields     map[string]string
	Event      Event
	Err        error
}

// Read gives the entry's event, reading it from Fields if ReadEntry did not.
func (e Entry) Read() (Event, error) {
	if e.Err != nil || e.Event.Seq > 0 { // ParseEvent gives a seq of 1 or more
		return e.Event, e.Err
	}
	return ParseEvent(e.Fields)
}

// Entries gives the entries of events not read from a stream, each read by
// ReadEntry.
func Entries(fields ...map[string]string) []Entry {
	out := make([]Entry, len(fields))
	for i, f := range fields {
		out[i] = ReadEntry("", "", f)
	}
	return out
}

// ReadEntry reads an outbox entry's fields into an Entry.
func ReadEntry(stream, id string, fields map[string]string) Entry {
	ev, err := ParseEvent(fields)
	if err != nil {
		ev = Event{}
	}
	return Entry{Stream: stream, ID: id, Fields: fields, Event: ev, Err: err}
}

// Digest computes an event's digest on the holder's previous one ("" before
// the first event), by the event's version (e.DV): the SHA-1, in hex, of the
// terms prev, holder, seq, id, fp, ts, cp, ops, state, memo, xfer, in that
// order.
//
// DigestV2, what the library computes: each term as <decimal byte
// length>":"<bytes>, xfer always ("" outside a transfer).
//
// DigestV1, the events of older versions: the terms joined by newlines, xfer
// only when set (an ordinary event's digest is the one it had before
// transfers existed).
func Digest(prev string, e Event) string {
	h := sha1.New()
	terms := []string{prev, e.Holder, strconv.FormatInt(e.Seq, 10), e.ID, e.FP, strconv.FormatInt(e.TS, 10), e.CP, e.Ops, e.State, e.Memo, e.Xfer}
	if e.DV == DigestV2 {
		for _, s := range terms {
			h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
			h.Write([]byte{':'})
			h.Write([]byte(s))
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	if e.Xfer == "" {
		terms = terms[:len(terms)-1]
	}
	for i, s := range terms {
		if i > 0 {
			h.Write([]byte{'\n'})
		}
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}
