// Package instructions is the vocabulary of atomledger: instructions and their
// ops, the fluent builder, the JSON codec, validation, the asset registry and
// the error codes every other package speaks.
//
// # Basics
//
// An Instruction names one holder and carries 1 to 64 ops that are applied in
// order, all or nothing. Amounts are decimal strings ("80.00"); each asset has
// a scale in the Registry, points have scale 0. Normalize checks an instruction
// against a Registry and turns every amount into integer minor units, never
// rounding: a digit past the scale is INVALID_AMOUNT.
//
// Every business outcome has a stable Code. An *Error carries the code, the
// index of the op that failed and a message, and unwraps to its code, itself
// an error, so that errors.Is(err, instructions.CodeInsufficientFunds) works
// (and errors.Is(err, instructions.ErrInsufficientFunds), the same value).
//
// # Caveats
//
// Every amount and every stored value stays within 0 .. 2^53-1 minor units:
// the Lua script that applies instructions works on doubles, which stop being
// exact above that.
//
// This package imports neither Redis nor HTTP: it is the domain at the centre.
package instructions
