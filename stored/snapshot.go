package stored

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Snapshot is a holder's whole state in the library's terms: minor units,
// coupons and holds in their stored form. The engine reads it from Redis,
// the ledger from PostgreSQL; reconciliation compares the two and a rebuild
// writes the ledger's back to Redis.
type Snapshot struct {
	Holder    string
	Status    string
	Seq       int64
	Digest    string
	CreatedMs int64
	Lanes     int                 // a hot holder's lane count (its field lanes); 0 for a plain holder
	Balances  map[string][2]int64 // asset -> available, frozen
	Points    *[2]int64           // available, frozen; nil if the holder has no points fields (p:a, p:f)
	Coupons   map[string]string   // coupon -> "<state>" or "<state>|<expires ms>" (ParseCoupon)
	Holds     map[string]string   // open hold -> its stored form (ParseHold)
	// LanesHist is a hot holder's lane 0's FieldLanesHist, the counts it had
	// before its raises ("<count>@<ms>;" each): Redis's as it is, which may
	// keep raises older than a record's life; the ledger's, those since a
	// cut-off, filled with Recent, so that a rebuilt lane 0 still routes the
	// ids of its window by them.
	LanesHist string
	// Recent lists instructions whose idempotency records a rebuild writes
	// again, in seq order: the ledger fills it for those applied since a
	// cut-off; the engine's Snapshots leaves it empty.
	Recent []RecentInstruction
	// Unreadable lists the fields of the Redis hash whose value is not the
	// number it must be (changed outside the engine), each as
	// `<field> "<value>"`, sorted; read as 0. Such a holder differs from
	// every other state (Differences).
	Unreadable []string
}

// RecentInstruction is an applied instruction whose idempotency record a
// rebuild writes: the record is the start of FP, then State without what a
// replay does not need, as the library writes it, and lives until TsMs plus
// the idempotency TTL.
type RecentInstruction struct {
	ID    string
	FP    string // the request fingerprint
	TsMs  int64  // when it was applied: Redis server time, Unix ms
	State string // the event's state, byte for byte the result json the client got
}

// Differences lists what differs between a holder's state in Redis (r) and
// another account of it (o, named other in the text: the ledger's, as a
// rule): digest, status, created_ms, lanes, balances, points, coupons and holds,
// one line each. The seq is not compared: callers judge it first. An absent
// balance or points hash counts as zero, as the engine's State shows it.
func Differences(r, o *Snapshot, other string) []string {
	var d []string
	for _, f := range r.Unreadable {
		d = append(d, "not a number in redis: "+f)
	}
	for _, f := range o.Unreadable {
		d = append(d, "not a number in "+other+": "+f)
	}
	add := func(what string, rv, ov any) { d = append(d, fmt.Sprintf("%s: redis %v, %s %v", what, rv, other, ov)) }
	if r.Digest != o.Digest {
		add(FieldDigest, r.Digest, o.Digest)
	}
	if r.Status != o.Status {
		add(FieldStatus, r.Status, o.Status)
	}
	if r.CreatedMs != o.CreatedMs {
		add(FieldCreatedMs, r.CreatedMs, o.CreatedMs)
	}
	if max(r.Lanes, 1) != max(o.Lanes, 1) {
		add(FieldLanes, max(r.Lanes, 1), max(o.Lanes, 1))
	}
	for _, a := range unionKeys(r.Balances, o.Balances) {
		if r.Balances[a] != o.Balances[a] {
			add("balance "+a+" [available frozen]", r.Balances[a], o.Balances[a])
		}
	}
	pts := func(p *[2]int64) [2]int64 {
		if p == nil {
			return [2]int64{}
		}
		return *p
	}
	if pts(r.Points) != pts(o.Points) {
		add("points [available frozen]", pts(r.Points), pts(o.Points))
	}
	for _, c := range unionKeys(r.Coupons, o.Coupons) {
		if r.Coupons[c] != o.Coupons[c] {
			add("coupon "+c, r.Coupons[c], o.Coupons[c])
		}
	}
	for _, h := range unionKeys(r.Holds, o.Holds) {
		if r.Holds[h] != o.Holds[h] {
			add("hold "+h, r.Holds[h], o.Holds[h])
		}
	}
	// Redis may keep older raises than the other (a cut-off) has: only a
	// raise Redis lacks is a difference, and it routes retried ids wrongly.
	for _, e := range strings.SplitAfter(o.LanesHist, ";") {
		if e != "" && !strings.Contains(";"+r.LanesHist, ";"+e) {
			add(FieldLanesHist, r.LanesHist, o.LanesHist)
			break
		}
	}
	return d
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
