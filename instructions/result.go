package instructions

import (
	stdjson "encoding/json"
	"slices"
	"strconv"
)

// Result is the state, after an applied instruction, of every account it
// touched. Replayed is true when the answer comes from the idempotency record
// of an earlier identical instruction.
type Result struct {
	ID       string             `json:"id"`
	Holder   string             `json:"holder"`
	Seq      int64              `json:"seq"`
	Replayed bool               `json:"replayed"`
	Balances map[string]Balance `json:"balances"`
	Points   *Points            `json:"points,omitempty"`
	Coupons  map[string]string  `json:"coupons"`
	Holds    map[string]Hold    `json:"holds"` // open holds only: a closed hold is absent
	// Lane is the lane of a hot holder a credit went to (its figures are that
	// lane's); absent for lane 0 and plain holders.
	Lane int `json:"lane,omitempty"`
}

// State is everything a holder has.
type State struct {
	Holder   string             `json:"holder"`
	Status   string             `json:"status"`
	Seq      int64              `json:"seq"`
	Balances map[string]Balance `json:"balances"`
	Points   Points             `json:"points"`
	Coupons  map[string]string  `json:"coupons"`
	Holds    map[string]Hold    `json:"holds"`
	// Lanes is each lane's share of a hot holder, whose figures above are the
	// sum of its lanes; absent for a plain holder.
	Lanes []Lane `json:"lanes,omitempty"`
}

// Lane is one lane's share of a hot holder (docs/hot-holders.md): lane 0 is
// the holder itself, lane i the holder named "<holder>#i".
type Lane struct {
	Lane     int                `json:"lane"`
	Holder   string             `json:"holder"`
	Seq      int64              `json:"seq"`
	Balances map[string]Balance `json:"balances"`
	Points   Points             `json:"points"`
}

// Holder statuses.
const (
	StatusActive    = "active"
	StatusSuspended = "suspended"
)

// Coupon states; a held coupon reads "held:<hold>".
const (
	CouponAvailable = "available"
	CouponUsed      = "used"
	CouponHeldBy    = "held:"
)

// Balance of one asset, as decimal strings at the asset's scale.
type Balance struct {
	Available string `json:"available"`
	Frozen    string `json:"frozen"`
}

// Points of a holder, as integer strings.
type Points struct {
	Available string `json:"available"`
	Frozen    string `json:"frozen"`
}

// Hold is an open hold: what is left of each leg (asset code or "points"), the
// coupons it holds, and when it expires (Unix ms, absent when it does not).
type Hold struct {
	Legs      map[string]string `json:"legs"`
	Coupons   []string          `json:"coupons"`
	ExpiresMs int64             `json:"expires_ms,omitempty"`
}

// AppendJSON appends r as encoding/json's Marshal writes it, byte for byte
// (map keys in order, HTML characters escaped), without reflection: the
// daemon answers every applied instruction with one.
func (r Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"holder":`...)
	b = appendString(b, r.Holder)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	b = append(b, `,"replayed":`...)
	b = strconv.AppendBool(b, r.Replayed)
	b = append(b, `,"balances":`...)
	b = appendMap(b, r.Balances, func(b []byte, v Balance) []byte { return appendFigures(b, v.Available, v.Frozen) })
	if r.Points != nil {
		b = append(b, `,"points":`...)
		b = appendFigures(b, r.Points.Available, r.Points.Frozen)
	}
	b = append(b, `,"coupons":`...)
	b = appendMap(b, r.Coupons, appendString)
	b = append(b, `,"holds":`...)
	b = appendMap(b, r.Holds, appendHold)
	if r.Lane != 0 {
		b = append(b, `,"lane":`...)
		b = strconv.AppendInt(b, int64(r.Lane), 10)
	}
	return append(b, '}')
}

// appendFigures appends a Balance or Points object.
func appendFigures(b []byte, available, frozen string) []byte {
	b = append(b, `{"available":`...)
	b = appendString(b, available)
	b = append(b, `,"frozen":`...)
	b = appendString(b, frozen)
	return append(b, '}')
}

func appendHold(b []byte, h Hold) []byte {
	b = append(b, `{"legs":`...)
	b = appendMap(b, h.Legs, appendString)
	b = append(b, `,"coupons":`...)
	if h.Coupons == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range h.Coupons {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, c)
		}
		b = append(b, ']')
	}
	if h.ExpiresMs != 0 {
		b = append(b, `,"expires_ms":`...)
		b = strconv.AppendInt(b, h.ExpiresMs, 10)
	}
	return append(b, '}')
}

// appendMap appends m as an object with its keys in order, or null.
func appendMap[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var stack [8]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = value(b, m[k])
	}
	return append(b, '}')
}

// appendString appends s quoted. The figures, ids and states of a result
// need no escape; anything else is left to encoding/json, so that the
// escapes are its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := stdjson.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
