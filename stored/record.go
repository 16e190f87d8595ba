package stored

import (
	"fmt"
	"slices"
	"strings"
)

// An idempotency record (a string under cluster.Tx) is what the library
// keeps of an instruction it answered: the start of the fingerprint
// (RecordFP characters), then the outcome, the kept result (KeptResult) of
// an applied instruction or a rejection (Rejection).

// RecordFP is how much of the fingerprint an idempotency record keeps:
// 64 bits tell two bodies sent under one id apart.
const RecordFP = 16

// jsonDoorFP is the length of the JSON door's fingerprints (the SHA-1 of the
// text, in hex), where the engine's are SHA-256.
const jsonDoorFP = 40

// Record is an idempotency record as the library writes it: the start of fp,
// then outcome.
func Record(fp, outcome string) string {
	if len(fp) > RecordFP {
		fp = fp[:RecordFP]
	}
	return fp + outcome
}

// Rejection is the outcome of a refused instruction as a record keeps it and
// the library answers it: "err\n<code>\n<op index>\n<detail>", op index -1
// for none.
func Rejection(code string, opIndex int, detail string) string {
	return fmt.Sprintf("err\n%s\n%d\n%s", code, opIndex, detail)
}

// RecordApplied tells whether raw, an idempotency record, records an applied
// instruction of fingerprint fp (a rejection's outcome begins "err").
func RecordApplied(raw, fp string) bool {
	p := Record(fp, "")
	return len(raw) > len(p) && raw[:len(p)] == p && raw[len(p)] != 'e'
}

// RecordRefused tells whether raw, an idempotency record, records the
// rejection code of an instruction of fingerprint fp.
func RecordRefused(raw, fp, code string) bool {
	return strings.HasPrefix(raw, Record(fp, "err\n"+code+"\n"))
}

// RecordRejection reads the rejection an idempotency record of an
// instruction of fingerprint fp keeps, its parts as written ("err\n<code>\n<op
// index>\n<detail>"): ok is false when raw records no such rejection.
func RecordRejection(raw, fp string) (code, opIndex, detail string, ok bool) {
	p := Record(fp, "err\n")
	if !strings.HasPrefix(raw, p) {
		return "", "", "", false
	}
	parts := strings.SplitN(raw[len(p):], "\n", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// AppliedRecord is the idempotency record of an applied instruction whose
// fingerprint is fp and whose event's state is state: what the library
// wrote for it, and what a rebuild writes again.
func AppliedRecord(fp, state string) string {
	if len(fp) == jsonDoorFP {
		return Record(fp, state) // the JSON door's replays answer the whole result
	}
	return Record(fp, KeptResult(state))
}

// RecordOutcome takes the outcome out of an idempotency record, the way the
// library answers a replay of it: what the library writes (Record: the
// kept result of an applied instruction, answered as "ok\n<kept result>", or
// the rejection), or what key format 1 wrote ("<fingerprint>\n<outcome>",
// the fingerprint 32 hex characters), replayed until it expires.
func RecordOutcome(raw string) (string, error) {
	if len(raw) > 33 && raw[32] == '\n' && raw[19] != '\n' {
		if out := raw[33:]; strings.HasPrefix(out, "ok\n") || strings.HasPrefix(out, "err\n") {
			return out, nil
		}
	} else if len(raw) > RecordFP {
		out := raw[RecordFP:]
		if strings.HasPrefix(out, "err\n") {
			return out, nil
		}
		if !strings.Contains(out, "\n") {
			return "ok\n" + out, nil
		}
	}
	return "", fmt.Errorf("unexpected form %.40q", raw)
}

// KeptResult is what an idempotency record keeps of a result json as the
// library writes it (an event's state): "<seq>", then for each account in
// the result's order " b<asset>/<available>/<frozen>", " c<coupon>/<state>",
// " h<hold>/<hold>" and " p<available>/<frozen>". That is all an answer
// needs, in about half the bytes. A result ReadResult cannot read, or whose
// seq is not first, is kept whole.
func KeptResult(result string) string {
	var b strings.Builder
	ok := ReadResult(result, func(kind byte, name string, v [2]string) bool {
		switch kind {
		case 's':
			b.WriteString(v[0])
		case 'b':
			b.WriteString(" b" + name + "/" + v[0] + "/" + v[1])
		case 'c', 'h':
			b.WriteString(" " + string(kind) + name + "/" + v[0])
		case 'p':
			b.WriteString(" p" + v[0] + "/" + v[1])
		}
		return true
	})
	if !ok || b.Len() == 0 || b.String()[0] == ' ' {
		return result
	}
	return b.String()
}

// ReadResult reads a result json as the library writes it: no whitespace,
// no escapes, printable ASCII, each key once, "s" and "st" strings, "b" and
// "c" and "h" objects, "p" a pair. That is every result in practice, read
// here without decoding into maps. It calls account for the seq and each
// account, in the order written: kind 's' (v[0] the seq), 'b' (a balance:
// name the asset, v its available and frozen minor units), 'p' (points: v
// available and frozen), 'c' (a coupon: name, v[0] its stored form) or 'h'
// (a hold: name, v[0] its stored form). It answers false on anything else,
// or when account does: ParseResult reads what it cannot.
func ReadResult(body string, account func(kind byte, name string, v [2]string) bool) bool {
	p := plainJSON{body}
	var seen [6]bool // each key below at most once
	ok := p.object(func(key string) bool {
		i := slices.Index([]string{"s", "st", "b", "p", "c", "h"}, key)
		if i < 0 || seen[i] {
			return false
		}
		seen[i] = true
		switch key {
		case "s":
			s, ok := p.str()
			return ok && account('s', "", [2]string{s})
		case "st":
			_, ok := p.str()
			return ok
		case "p":
			v, ok := p.pair()
			return ok && account('p', "", v)
		case "b":
			return p.object(func(a string) bool {
				v, ok := p.pair()
				return ok && account('b', a, v)
			})
		default: // "c", "h"
			return p.object(func(name string) bool {
				v, ok := p.str()
				return ok && account(key[0], name, [2]string{v})
			})
		}
	})
	return ok && p.s == ""
}

// ReadKept reads the kept form of a result (KeptResult) as ReadResult reads
// a result json, calling account for the seq and each account. It answers
// false on anything else, or when account does.
func ReadKept(body string, account func(kind byte, name string, v [2]string) bool) bool {
	parts := strings.Split(body, " ")
	if !account('s', "", [2]string{parts[0]}) {
		return false
	}
	for _, p := range parts[1:] {
		if p == "" {
			return false
		}
		f := strings.Split(p[1:], "/")
		var ok bool
		switch {
		case p[0] == 'b' && len(f) == 3:
			ok = account('b', f[0], [2]string{f[1], f[2]})
		case (p[0] == 'c' || p[0] == 'h') && len(f) == 2:
			ok = account(p[0], f[0], [2]string{f[1]})
		case p[0] == 'p' && len(f) == 2:
			ok = account('p', "", [2]string{f[0], f[1]})
		}
		if !ok {
			return false
		}
	}
	return true
}

// plainJSON reads the JSON ReadResult takes, from the front of s.
type plainJSON struct{ s string }

func (p *plainJSON) byte(c byte) bool {
	if p.s == "" || p.s[0] != c {
		return false
	}
	p.s = p.s[1:]
	return true
}

// str reads a string of printable ASCII without escapes.
func (p *plainJSON) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	for i := 0; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			v := p.s[:i]
			p.s = p.s[i+1:]
			return v, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

// pair reads an array of exactly two strings.
func (p *plainJSON) pair() ([2]string, bool) {
	var v [2]string
	var ok bool
	if !p.byte('[') {
		return v, false
	}
	if v[0], ok = p.str(); !ok || !p.byte(',') {
		return v, false
	}
	v[1], ok = p.str()
	return v, ok && p.byte(']')
}

// object reads an object whose keys are such strings; member reads the value
// of each key and tells whether it could.
func (p *plainJSON) object(member func(key string) bool) bool {
	if !p.byte('{') {
		return false
	}
	for first := true; !p.byte('}'); first = false {
		if !first && !p.byte(',') {
			return false
		}
		k, ok := p.str()
		if !ok || !p.byte(':') || !member(k) {
			return false
		}
	}
	return true
}
