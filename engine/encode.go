package engine

import "github.com/atomledger/atomledger/instructions"

// Encode validates in and returns the keys and arguments Apply would send
// with FCALL of the library's apply function: what a benchmark needs to run the bare function
// with the same arguments, encoded in advance, and so to tell the engine's
// own cost (validation, encoding, reply parsing) from the script's.
//
// Errors: INVALID_INSTRUCTION, INVALID_AMOUNT, INVALID_ID, UNKNOWN_ASSET,
// TOO_MANY_OPS.
func (e *Engine) Encode(in instructions.Instruction) (keys []string, args []any, err error) {
	c, err := e.prepare(in)
	if err != nil {
		return nil, nil, err
	}
	return c.keys, c.args, nil
}
