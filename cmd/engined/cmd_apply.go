package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// applyTimeout bounds one apply, connection included. Past it the outcome is
// unknown (UNAVAILABLE): run the same file again, its id makes that safe.
const applyTimeout = 10 * time.Second

func applyUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined apply -f FILE [--server URL [--token TOKEN]] [flags]

Apply reads one instruction as JSON from FILE ("-" for stdin), applies it,
and prints on stdout either the result (exit status 0) or the error object
{"error": {"code": ..., "op_index": ..., "message": ...}} (exit status 1).
Without --server it applies the instruction on Redis itself; with --server
it sends it to a running daemon (engined serve) and prints its answer. An
instruction whose outcome is UNAVAILABLE may or may not have run: apply the
same file again, its id makes that safe. A bad flag, a bad environment value
or an unreadable FILE exits 2 with a message on stderr.

FILE may hold a transfer instead: {"id": ..., "parts": [{"holder": ...,
"ops": [...]}, ...]}, applied to every holder or none (POST /v1/transfers
with --server). Apply then prints the transfer's state, whose status is
committed (exit status 0), aborted with the error (exit status 1) or pending
(exit status 1): not decided in time, the recovery worker of a running
daemon aborts it unless the same file, applied again, takes it further.
A transfer refused outright prints the error object (exit status 1).

Flags:

  -f FILE
        the instruction or transfer to apply; - reads stdin
  --server URL
        base URL of a running daemon, such as http://127.0.0.1:8080
  --token TOKEN
        bearer token for --server (ENGINED_TOKEN; prefer the variable: a
        flag shows in the process list)
`)
	printConfigUsage(w)
}

// runApply is "engined apply".
func runApply(args []string, c cli) int {
	f := newCommandFlags("apply", c, applyUsage)
	f.argHint = " (the instruction is given with -f FILE)"
	fs := f.fs
	file := fs.String("f", "", "the instruction or transfer to apply; - reads stdin")
	server := fs.String("server", "", "base URL of a running daemon")
	token := fs.String("token", "", "bearer token for --server (ENGINED_TOKEN)")
	if status, ok := f.parse(args); !ok {
		return status
	}
	if *file == "" {
		return f.fail("-f FILE is required (- reads stdin)")
	}
	cfg, err := f.config()
	if err != nil {
		return f.fail("%v", err)
	}
	base, err := serverURL(*server)
	if err != nil {
		return f.fail("%v", err)
	}
	if *token == "" {
		*token = c.getenv("ENGINED_TOKEN")
	}
	data, err := readInstruction(*file, c.stdin)
	if err != nil {
		return f.fail("%v", err)
	}
	if len(data) > instructions.MaxPayload {
		// Read only in part: neither its length nor what it is can be told,
		// and nothing of it is sent.
		return printOutcome(c, nil, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"%s is over %d bytes, the most an instruction or a transfer may have", *file, instructions.MaxPayload))
	}

	// An interrupt cancels the apply like the timeout does: the outcome is
	// then reported as unknown, not hidden by a dying process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	transfer := isTransfer(data)
	if base != nil {
		route := "instructions"
		if transfer {
			route = "transfers"
		}
		return printAnswer(c, post(ctx, base.JoinPath("v1", route).String(), *token, data), transfer)
	}
	rdb := cfg.RedisClient()
	defer rdb.Close()
	eng := engine.New(rdb, cfg.EngineOptions())
	defer eng.Flush() // a payment's booking, before the client closes
	if transfer {
		return applyTransfer(ctx, c, eng, data)
	}
	in, err := instructions.Decode(data)
	if err != nil {
		return printOutcome(c, nil, err)
	}
	res, err := eng.Apply(ctx, in)
	return printOutcome(c, res, err)
}

// applyTransfer applies a transfer file on Redis itself and prints its
// state, or the error object when it is refused outright.
func applyTransfer(ctx context.Context, c cli, eng *engine.Engine, data []byte) int {
	t, err := instructions.DecodeTransfer(data)
	if err != nil {
		return printOutcome(c, nil, err)
	}
	st, err := eng.Transfer(ctx, t)
	if err != nil {
		return printOutcome(c, nil, err)
	}
	return printJSON(c, st, transferExit(st.Status))
}

// isTransfer tells a transfer file from an instruction file: a JSON object
// with a "parts" key. Anything else is read as an instruction, and refused
// as one if it is not.
func isTransfer(data []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil {
		return false
	}
	_, ok := keys["parts"]
	return ok
}

// transferExit is the exit status for a transfer's state: only a committed
// transfer is done; aborted and pending ones are not (yet).
func transferExit(status string) int {
	if status == engine.TransferCommitted {
		return exitOK
	}
	return exitRejected
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

// printOutcome prints the result, or the error object when err is not nil,
// and gives the exit status.
func printOutcome(c cli, res any, err error) int {
	if err != nil {
		e := *asError(err)
		e.Message = withClusterHint(e.Message, "; ")
		return printJSON(c, errorObject{Error: &e}, exitRejected)
	}
	return printJSON(c, res, exitOK)
}

// printJSON prints v, indented, on stdout and gives status as the exit
// status.
func printJSON(c cli, v any, status int) int {
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
