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

Flags:

  -f FILE
        the instruction to apply; - reads stdin
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
	const name = "engined apply"
	fs := newFlagSet(name, c, applyUsage)
	file := fs.String("f", "", "the instruction to apply; - reads stdin")
	server := fs.String("server", "", "base URL of a running daemon")
	token := fs.String("token", "", "bearer token for --server (ENGINED_TOKEN)")
	cf := addConfigFlags(fs)
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return failUsage(c, name, "unexpected argument %q (the instruction is given with -f FILE)", fs.Arg(0))
	}
	if *file == "" {
		return failUsage(c, name, "-f FILE is required (- reads stdin)")
	}
	cfg, err := cf.config(c.getenv)
	if err != nil {
		return failUsage(c, name, "%v", err)
	}
	endpoint, err := instructionsURL(*server)
	if err != nil {
		return failUsage(c, name, "%v", err)
	}
	if *token == "" {
		*token = c.getenv("ENGINED_TOKEN")
	}
	data, err := readInstruction(*file, c.stdin)
	if err != nil {
		return failUsage(c, name, "%v", err)
	}

	// An interrupt cancels the apply like the timeout does: the outcome is
	// then reported as unknown, not hidden by a dying process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	if endpoint != "" {
		return printAnswer(c, postInstruction(ctx, endpoint, *token, data))
	}
	in, err := instructions.Decode(data)
	if err != nil {
		return printOutcome(c, instructions.Result{}, err)
	}
	rdb := cfg.RedisClient()
	defer rdb.Close()
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
