package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	json "github.com/goccy/go-json"
)

// MaxPayload bounds an encoded instruction: a script run must stay short.
const MaxPayload = 64 << 10

// Decode reads one instruction from JSON. Unknown fields, trailing data and
// amounts given as JSON numbers are rejected; the answer is always an *Error
// (INVALID_INSTRUCTION, or INVALID_AMOUNT for an amount that is not a string).
// Decode checks the shape only: Normalize checks the content.
func Decode(data []byte) (Instruction, error) {
	var in Instruction
	if len(data) > MaxPayload {
		return in, Errorf(CodeInvalidInstruction, NoOp, "instruction is %d bytes, at most %d", len(data), MaxPayload)
	}
	// Ops are decoded one by one so that an error names the op it is in.
	var w struct {
		ID           string            `json:"id"`
		Holder       string            `json:"holder"`
		Counterparty string            `json:"counterparty"`
		Memo         string            `json:"memo"`
		Ops          []json.RawMessage `json:"ops"`
	}
	if err := decodeStrict(data, &w); err != nil {
		return Instruction{}, err
	}
	in = Instruction{ID: w.ID, Holder: w.Holder, Counterparty: w.Counterparty, Memo: w.Memo}
	if w.Ops != nil {
		in.Ops = make([]Op, len(w.Ops))
	}
	for i, raw := range w.Ops {
		if err := decodeStrict(raw, &in.Ops[i]); err != nil {
			err.OpIndex = i
			return Instruction{}, err
		}
	}
	return in, nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown fields.
func decodeStrict(data []byte, v any) *Error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return Errorf(CodeInvalidInstruction, NoOp, "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(CodeInvalidInstruction, NoOp, "malformed JSON: data after the instruction")
	}
	return nil
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
