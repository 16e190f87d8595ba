package instructions

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// MaxPayload bounds an encoded instruction: a script run must stay short.
const MaxPayload = 64 << 10

// Decode reads one instruction from JSON. Unknown fields, trailing data and
// amounts given as JSON numbers are rejected; the answer is always an *Error
// (INVALID_INSTRUCTION, or INVALID_AMOUNT for an amount that is not a string).
// Decode checks the shape only: Normalize checks the content.
func Decode(data []byte) (Instruction, error) {
	if in, ok := decodeOnePass(data); ok {
		return in, nil
	}
	return decodeStrictly(data)
}

// decodeStrictly is Decode's strict decoder: a key walk, a strict decode of
// the instruction, then of each op. It reads every body the one-pass decoder
// does not, and says what is wrong with it.
func decodeStrictly(data []byte) (Instruction, error) {
	var in Instruction
	if len(data) > MaxPayload {
		return in, Errorf(CodeInvalidInstruction, NoOp, "instruction is %d bytes, at most %d", len(data), MaxPayload)
	}
	var w struct {
		ID           string            `json:"id"`
		Holder       string            `json:"holder"`
		Counterparty *string           `json:"counterparty"`
		Memo         string            `json:"memo"`
		Ops          []json.RawMessage `json:"ops"`
	}
	if !utf8.Valid(data) {
		return in, Errorf(CodeInvalidInstruction, NoOp, "instruction is not valid UTF-8")
	}
	if u, ok := loneSurrogate(data); ok {
		return in, Errorf(CodeInvalidInstruction, NoOp, "a string holds the escape \\u%04x, half of a surrogate pair: not a character", u)
	}
	if err := checkKeys(data, instructionKeys); err != nil {
		return Instruction{}, err
	}
	if err := DecodeStrict(data, &w); err != nil {
		return Instruction{}, err
	}
	var cp string
	if w.Counterparty != nil {
		// Left out, it is the default; given, it is an id like the others.
		if cp = *w.Counterparty; cp == "" {
			return Instruction{}, Errorf(CodeInvalidID, NoOp, "counterparty \"\" must match [A-Za-z0-9_.:-]{1,64}: leave it out for %q", DefaultCounterparty)
		}
	}
	ops, err := decodeOps(w.Ops)
	if err != nil {
		return Instruction{}, err
	}
	return Instruction{ID: w.ID, Holder: w.Holder, Counterparty: cp, Memo: w.Memo, Ops: ops}, nil
}

// loneSurrogate finds in the JSON text data an escape \uD800 .. \uDFFF
// that is not half of a pair (high, then low): JSON's grammar takes it,
// but it is no character, and the decoder would store U+FFFD in its place,
// a memo other than the one sent (the JSON door refuses it too).
func loneSurrogate(data []byte) (rune, bool) {
	if bytes.IndexByte(data, '\\') < 0 {
		return 0, false
	}
	hex4 := func(i int) rune {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return -1
		}
		v, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		if err != nil {
			return -1
		}
		return rune(v)
	}
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			in = !in
		case in && c == '\\':
			u := hex4(i)
			switch {
			case u >= 0xD800 && u <= 0xDBFF:
				if lo := hex4(i + 6); lo < 0xDC00 || lo > 0xDFFF {
					return u, true
				}
				i += 11
			case u >= 0xDC00 && u <= 0xDFFF:
				return u, true
			default:
				i++ // the escaped character
			}
		}
	}
	return 0, false
}

// decodeOps decodes ops one by one, so that an error names the op it is in.
func decodeOps(raws []json.RawMessage) ([]Op, *Error) {
	if raws == nil {
		return nil, nil
	}
	ops := make([]Op, len(raws))
	for i, raw := range raws {
		err := checkKeys(raw, opKeys)
		if err == nil {
			err = DecodeStrict(raw, &ops[i])
		}
		if err != nil {
			err.OpIndex = i
			return nil, err
		}
	}
	return ops, nil
}

// The keys of an instruction and of an op, spelled exactly.
var (
	instructionKeys = []string{"id", "holder", "counterparty", "memo", "ops"}
	opKeys          = []string{"op", "asset", "amount", "hold", "leg", "coupon", "ttl_ms", "expires_ms", "lanes"}
)

// CheckKeys refuses, in the JSON object data, a key given twice or a key not
// spelled exactly as one of keys. The decoder would take the last of two
// duplicates and match keys whatever their case: a body whose meaning
// depends on that is refused instead (INVALID_INSTRUCTION). Shape errors
// are left to the decoder.
func CheckKeys(data []byte, keys ...string) *Error {
	return walkKeys(data, keys, nil)
}

// checkKeys is CheckKeys for an instruction's, an op's, a transfer's or a
// part's keys, which also refuses an optional field given as null and an
// op's field given empty.
func checkKeys(data []byte, keys []string) *Error {
	return walkKeys(data, keys, func(key, v string) *Error {
		// An optional field is left out, never null; an op's field is never
		// empty (an empty leg would read as "the whole hold").
		switch {
		case v == "null" && key != "amount" && key != "id" && key != "holder" && key != "ops": // INVALID_AMOUNT, INVALID_ID, "needs at least one op" below
			return Errorf(CodeInvalidInstruction, NoOp, "field %q is null: leave it out", clip(key))
		case v == `""` && &keys[0] == &opKeys[0]:
			return Errorf(CodeInvalidInstruction, NoOp, "field %q is empty: leave it out", clip(key))
		}
		return nil
	})
}

// walkKeys goes through the members of the JSON object data, refusing a key
// given twice or not one of keys, and hands each value's text to value
// (when not nil).
func walkKeys(data []byte, keys []string, value func(key, v string) *Error) *Error {
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != stdjson.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		switch {
		case seen[key]:
			return Errorf(CodeInvalidInstruction, NoOp, "field %q is given twice", clip(key))
		case !slices.Contains(keys, key):
			return Errorf(CodeInvalidInstruction, NoOp, "unknown field %q", clip(key))
		}
		seen[key] = true
		var skip stdjson.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
		if value != nil {
			if err := value(key, string(skip)); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeStrict decodes exactly one JSON value into v, refusing unknown
// fields; what is wrong is said in JSON's words (a field, a list, a whole
// number), never Go's types, as an INVALID_INSTRUCTION *Error. Decode and
// the daemon's other bodies read through it.
func DecodeStrict(data []byte, v any) *Error {
	if string(bytes.TrimSpace(data)) == "null" { // encoding/json would leave v as it is, without a word
		return Errorf(CodeInvalidInstruction, NoOp, "want a JSON object, got null")
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) { // encoding/json would say "invalid character 'ï'"
		return Errorf(CodeInvalidInstruction, NoOp, "malformed JSON: it starts with a UTF-8 byte order mark (EF BB BF): send it without one")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Errorf(CodeInvalidInstruction, NoOp, "field %q must be %s, got %s", clip(te.Field), jsonKind(te.Type), clip(te.Value))
		}
		if te != nil { // the value itself, not one of its fields: the message would name a Go type
			return Errorf(CodeInvalidInstruction, NoOp, "want a JSON object, got %s", clip(te.Value))
		}
		if err == io.EOF { // nothing but white space
			return Errorf(CodeInvalidInstruction, NoOp, "the body is empty: want a JSON object")
		}
		return Errorf(CodeInvalidInstruction, NoOp, "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(CodeInvalidInstruction, NoOp, "malformed JSON: data after the JSON value")
	}
	return nil
}

// jsonKind names, for a user, the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.Kind().String()
}

// Encode writes an instruction as JSON.
func Encode(in Instruction) ([]byte, error) { return marshal(in) }

// UnmarshalJSON accepts only a JSON string.
func (a *Amount) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return Errorf(CodeInvalidAmount, NoOp, "amount must be a decimal string, got %s", truncate(b, 40))
	}
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return Errorf(CodeInvalidAmount, NoOp, "amount: %v", err)
	}
	*a = Amount(s)
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return fmt.Sprintf("%s...", b[:n])
	}
	return string(b)
}

func marshal(v any) ([]byte, error)   { return json.Marshal(v) }
func unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
