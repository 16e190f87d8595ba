package stored

import (
	"slices"
	"strconv"
	"strings"
)

// Fields of the holder hash (cluster.Holder is its key).
const (
	FieldStatus          = "status"
	FieldSeq             = "seq"
	FieldDigest          = "digest"
	FieldCreatedMs       = "created_ms"
	FieldPointsAvailable = "p:a"
	FieldPointsFrozen    = "p:f"
)

// Prefixes of the holder hash's per-account fields: "b:<asset>" available
// and "f:<asset>" frozen minor units, "c:<coupon>" a coupon, "h:<hold>" an
// open hold.
const (
	PrefixBalance = "b:"
	PrefixFrozen  = "f:"
	PrefixCoupon  = "c:"
	PrefixHold    = "h:"
)

// Fields of a hot holder's hash (DESIGN.md, "Hot holders"). FieldLanes, on
// every lane, is the lane count in decimal (absent: a plain holder, one
// lane); FieldLanesHist, on lane 0 only, the earlier counts still within the
// idempotency window, "<count>@<ms>;" per raise, ms the server time the count
// ended.
const (
	FieldLanes     = "lanes"
	FieldLanesHist = "lanes_hist"
)

// ParseHolder reads holder h's hash m (its fields and values) into a
// Snapshot; nil when m has no status (Redis lacks the holder). A stored
// value that is not a number is read as 0 and listed in Unreadable, so that
// reconciliation reports the holder and a forced rebuild writes it again.
func ParseHolder(h string, m map[string]string) *Snapshot {
	if m[FieldStatus] == "" {
		return nil
	}
	s := &Snapshot{Holder: h, Status: m[FieldStatus], Digest: m[FieldDigest], LanesHist: m[FieldLanesHist],
		Balances: map[string][2]int64{}, Coupons: map[string]string{}, Holds: map[string]string{}}
	bad := map[string]string{}
	num := func(f string) int64 {
		v := m[f]
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			bad[f] = v
		}
		return n
	}
	s.Seq, s.CreatedMs = num(FieldSeq), num(FieldCreatedMs)
	s.Lanes = int(num(FieldLanes))
	for f, v := range m {
		switch {
		case strings.HasPrefix(f, PrefixBalance), strings.HasPrefix(f, PrefixFrozen):
			a := f[len(PrefixBalance):] // as long as PrefixFrozen
			s.Balances[a] = [2]int64{num(PrefixBalance + a), num(PrefixFrozen + a)}
		case f == FieldPointsAvailable, f == FieldPointsFrozen:
			s.Points = &[2]int64{num(FieldPointsAvailable), num(FieldPointsFrozen)}
		case strings.HasPrefix(f, PrefixCoupon):
			s.Coupons[f[len(PrefixCoupon):]] = v
		case strings.HasPrefix(f, PrefixHold):
			s.Holds[f[len(PrefixHold):]] = v
		}
	}
	for f, v := range bad {
		s.Unreadable = append(s.Unreadable, f+" "+strconv.Quote(v))
	}
	slices.Sort(s.Unreadable)
	return s
}

// HolderFields are the fields and values of the holder hash that hold s, as
// the library writes them: no frozen field at zero, no lanes field for a
// plain holder.
func HolderFields(s *Snapshot) []any {
	f := []any{FieldStatus, s.Status, FieldSeq, strconv.FormatInt(s.Seq, 10),
		FieldDigest, s.Digest, FieldCreatedMs, strconv.FormatInt(s.CreatedMs, 10)}
	if s.Lanes > 1 {
		f = append(f, FieldLanes, strconv.Itoa(s.Lanes))
	}
	if s.LanesHist != "" {
		f = append(f, FieldLanesHist, s.LanesHist)
	}
	for a, b := range s.Balances {
		f = append(f, PrefixBalance+a, strconv.FormatInt(b[0], 10))
		if b[1] > 0 {
			f = append(f, PrefixFrozen+a, strconv.FormatInt(b[1], 10))
		}
	}
	if s.Points != nil {
		f = append(f, FieldPointsAvailable, strconv.FormatInt(s.Points[0], 10))
		if s.Points[1] > 0 {
			f = append(f, FieldPointsFrozen, strconv.FormatInt(s.Points[1], 10))
		}
	}
	for c, v := range s.Coupons {
		f = append(f, PrefixCoupon+c, v)
	}
	for h, v := range s.Holds {
		f = append(f, PrefixHold+h, v)
	}
	return f
}
