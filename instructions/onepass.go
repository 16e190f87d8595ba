package instructions

import "unicode/utf8"

// The one-pass decoder reads the common request, a well-formed instruction
// or transfer of plain strings and small whole numbers, in one walk over the
// bytes. It only ever accepts: on anything else (an escape, a null, an empty
// op field, a duplicate or unknown key, a number it does not read exactly,
// malformed JSON) it answers false, and Decode runs the strict decoder, whose
// error says what is wrong. So an error reads the same whichever path found
// it, and the one-pass decoder need only agree with the strict one on what
// it accepts (FuzzDecode_OnePassAgrees holds it to that).
//
// The body is copied into one string and every field is a piece of it, so a
// decode costs that copy, the ops and the whole numbers, whatever the number
// of fields. The pieces keep the whole body alive, at most MaxPayload bytes,
// for as long as the instruction lives.

// onePass reads one JSON text.
type onePass struct {
	s string
	i int
}

func newOnePass(data []byte) (onePass, bool) {
	if len(data) > MaxPayload || !utf8.Valid(data) {
		return onePass{}, false
	}
	return onePass{s: string(data)}, true
}

// decodeOnePass reads an instruction; ok is false when the strict decoder
// must say what the body is.
func decodeOnePass(data []byte) (in Instruction, ok bool) {
	p, ok := newOnePass(data)
	if !ok {
		return Instruction{}, false
	}
	ok = p.object(func(key string) (uint16, bool) {
		switch key {
		case "id":
			return 1, p.str(&in.ID)
		case "holder":
			return 2, p.str(&in.Holder)
		case "counterparty":
			return 4, p.str(&in.Counterparty) && in.Counterparty != "" // given empty: the strict decoder refuses it
		case "memo":
			return 8, p.str(&in.Memo)
		case "ops":
			return 16, p.ops(&in.Ops)
		}
		return 0, false
	})
	if !ok || !p.end() || len(in.Ops) == 0 {
		return Instruction{}, false
	}
	return in, true
}

// decodeTransferOnePass reads a transfer, as decodeOnePass an instruction.
func decodeTransferOnePass(data []byte) (t Transfer, ok bool) {
	p, ok := newOnePass(data)
	if !ok {
		return Transfer{}, false
	}
	ok = p.object(func(key string) (uint16, bool) {
		switch key {
		case "id":
			return 1, p.str(&t.ID)
		case "parts":
			return 2, p.list(func() bool {
				var part Part
				ok := p.object(func(key string) (uint16, bool) {
					switch key {
					case "holder":
						return 1, p.str(&part.Holder)
					case "ops":
						return 2, p.ops(&part.Ops)
					}
					return 0, false
				})
				t.Parts = append(t.Parts, part)
				return ok && len(part.Ops) > 0
			})
		}
		return 0, false
	})
	if !ok || !p.end() || len(t.Parts) == 0 {
		return Transfer{}, false
	}
	return t, true
}

// ops reads a list of ops. An op field is never empty: the strict decoder
// refuses an empty one.
func (p *onePass) ops(ops *[]Op) bool {
	return p.list(func() bool {
		var op Op
		ok := p.object(func(key string) (uint16, bool) {
			switch key {
			case "op":
				return 1, p.str(&op.Op) && op.Op != ""
			case "asset":
				return 2, p.str(&op.Asset) && op.Asset != ""
			case "amount":
				var s string
				ok := p.str(&s) && s != ""
				op.Amount = Amount(s)
				return 4, ok
			case "hold":
				return 8, p.str(&op.Hold) && op.Hold != ""
			case "leg":
				return 16, p.str(&op.Leg) && op.Leg != ""
			case "coupon":
				return 32, p.str(&op.Coupon) && op.Coupon != ""
			case "ttl_ms":
				return 64, p.int(&op.TTLMs)
			case "expires_ms":
				return 128, p.int(&op.ExpiresMs)
			case "lanes":
				var n *int64
				ok := p.int(&n)
				if ok {
					lanes := int(*n)
					op.Lanes = &lanes
				}
				return 256, ok
			}
			return 0, false
		})
		*ops = append(*ops, op)
		return ok
	})
}

// ws skips JSON whitespace.
func (p *onePass) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next consumes c, after whitespace, if it comes next.
func (p *onePass) next(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end tells whether only whitespace is left.
func (p *onePass) end() bool {
	p.ws()
	return p.i == len(p.s)
}

// object reads an object of at least one member, calling member after each
// key and its colon, to read the value. member answers whether it read it
// and the key's bit, one per known key (0: unknown), so that a key given
// twice is refused here.
func (p *onePass) object(member func(key string) (bit uint16, ok bool)) bool {
	if !p.next('{') {
		return false
	}
	var seen uint16
	for {
		var key string
		if !p.str(&key) || !p.next(':') {
			return false
		}
		bit, ok := member(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if p.next('}') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// list reads a list of at least one element, calling elem to read each.
func (p *onePass) list(elem func() bool) bool {
	if !p.next('[') {
		return false
	}
	for {
		if !elem() {
			return false
		}
		if p.next(']') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// str reads a string without escapes or control characters: its text is the
// bytes between the quotes.
func (p *onePass) str(v *string) bool {
	if !p.next('"') {
		return false
	}
	for j := p.i; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			*v = p.s[p.i:j]
			p.i = j + 1
			return true
		case c == '\\' || c < 0x20:
			return false
		}
	}
	return false
}

// int reads a whole number of at most 18 digits (so it cannot overflow), no
// sign but a minus, no leading zero, no fraction, no exponent.
func (p *onePass) int(v **int64) bool {
	p.ws()
	j, neg := p.i, false
	if j < len(p.s) && p.s[j] == '-' {
		j, neg = j+1, true
	}
	start := j
	var n int64
	for j < len(p.s) && '0' <= p.s[j] && p.s[j] <= '9' && j-start < 18 {
		n = n*10 + int64(p.s[j]-'0')
		j++
	}
	switch {
	case j == start, j < len(p.s) && '0' <= p.s[j] && p.s[j] <= '9', // none, or more than 18
		p.s[start] == '0' && (j-start > 1 || neg): // "01", "-0"
		return false
	}
	if neg {
		n = -n
	}
	p.i = j
	*v = &n
	return true
}
