package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// applyTimeout bounds one apply, connection included. Past it the outcome is
// unknown (UNAVAILABLE): run the same file again, its id makes that safe.
const applyTimeout = 10 * time.Second

func applyUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined apply -f FILE [flags]

Apply reads one instruction as JSON from FILE ("-" for stdin), applies it on
Redis, and prints on stdout either the result (exit status 0) or the error
object {"error": {"code": ..., "op_index": ..., "message": ...}} (exit
status 1). An instruction whose outcome is UNAVAILABLE may or may not have
run: apply the same file again, its id makes that safe. A bad flag, a bad
environment value or an unreadable FILE exits 2 with a message on stderr.

Flags:

  -f FILE
        the instruction to apply; - reads stdin
`)
	printConfigUsage(w)
}

// runApply is "engined apply".
func runApply(args []string, c cli) int {
	fs := flag.NewFlagSet("engined apply", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() { applyUsage(fs.Output()) }
	file := fs.String("f", "", "the instruction to apply; - reads stdin")
	cf := addConfigFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // the flag package has printed the error and the usage
	}
	fail := func(format string, args ...any) int {
		// errors.Join puts one error a line: each gets the prefix.
		msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\nengined apply: ")
		fmt.Fprintf(c.stderr, "engined apply: %s\n", msg)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (the instruction is given with -f FILE)", fs.Arg(0))
	}
	if *file == "" {
		return fail("-f FILE is required (- reads stdin)")
	}
	cfg, err := cf.config(c.getenv)
	if err != nil {
		return fail("%v", err)
	}
	data, err := readInstruction(*file, c.stdin)
	if err != nil {
		return fail("%v", err)
	}

	in, err := instructions.Decode(data)
	if err != nil {
		return printOutcome(c, instructions.Result{}, err)
	}
	rdb := cfg.RedisClient()
	defer rdb.Close()
	// An interrupt cancels the apply like the timeout does: the outcome is
	// then reported as unknown, not hidden by a dying process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	res, err := engine.New(rdb, cfg.EngineOptions()).Apply(ctx, in)
	return printOutcome(c, res, err)
}

// readInstruction reads the file, or stdin for "-". It reads at most one byte
// more than an instruction may have: Decode then refuses it without the whole
// of an oversized input in memory.
func readInstruction(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, instructions.MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// errorObject is the error answer of the contract: {"error": {...}}.
type errorObject struct {
	Error *instructions.Error `json:"error"`
}

// printOutcome prints the result, or the error object when err is not nil,
// and gives the exit status.
func printOutcome(c cli, res instructions.Result, err error) int {
	var v any = res
	status := exitOK
	if err != nil {
		v, status = errorObject{Error: asError(err)}, exitRejected
	}
	out, merr := json.MarshalIndent(v, "", "  ")
	if merr != nil {
		// Only a bug gets here: say so in the contract's form all the same.
		out, _ = json.MarshalIndent(errorObject{Error: asError(merr)}, "", "  ")
		status = exitRejected
	}
	if _, werr := fmt.Fprintf(c.stdout, "%s\n", out); werr != nil {
		fmt.Fprintf(c.stderr, "engined apply: write the outcome: %v\n", werr)
	}
	return status
}

// asError gives the *instructions.Error that err is or wraps; any other
// error is a bug, reported as INTERNAL.
func asError(err error) *instructions.Error {
	var e *instructions.Error
	if errors.As(err, &e) {
		return e
	}
	return &instructions.Error{Code: instructions.CodeInternal, OpIndex: instructions.NoOp, Message: err.Error(), Err: err}
}
