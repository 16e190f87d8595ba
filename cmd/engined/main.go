// Command engined is the atomledger daemon and its command-line tools.
//
// Usage:
//
//	engined <command> [flags]
//
// Every command reads the same configuration (see config.go): a flag, or else
// its ENGINED_* environment variable, or else the default of the contract.
//
// The files say what they hold: server.go and server_*.go are the HTTP
// server (routes, handlers, the error table in server_status.go, auth,
// metrics, the access log); cmd_*.go are the commands, each parsing its
// flags with flags.go, calling the libraries and printing; workers.go runs
// the background work that serve and relay share. The rules live in the
// libraries, not here: reconciliation and the lookup of an instruction by id
// in reconcile, the bench's settings, report tables and floor handler in
// internal/bench.
//
// Exit status: 0 on success; 1 when an instruction was rejected (the error
// object is on stdout) or a command failed at run time (serve or dev could
// not listen or serve); 2 for a bad invocation (unknown command, bad flag or
// environment value, unreadable input), with a message on stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/redis/go-redis/v9"
)

// Exit statuses shared by every command.
const (
	exitOK       = 0
	exitRejected = 1 // an error object was printed
	exitFailed   = 1 // the command could not do its work (serve could not listen, ...)
	exitUsage    = 2
)

// cli is what a command reads and writes. main passes the process's own;
// keeping them in one value keeps the commands free of globals.
type cli struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

func main() {
	// go-redis writes its own lines ("redis: <date> pool.go:...: failed to
	// dial") to stderr; a command answers a Redis it cannot reach in its
	// own words (UNAVAILABLE, or its message), and serve and relay send the
	// client's lines to their JSON log instead.
	redis.SetLogger(silentRedis{})
	os.Exit(run(os.Args[1:], cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// silentRedis is go-redis's logger outside serve and relay: it drops them.
type silentRedis struct{}

func (silentRedis) Printf(context.Context, string, ...any) {}

// command is one subcommand of engined.
type command struct {
	name    string
	summary string
	run     func(args []string, c cli) int
	usage   func(w io.Writer)
}

// commands lists the subcommands in the order the usage shows them. help is
// dispatched by run itself: listing it here would make an initialization cycle.
func commands() []command {
	return []command{
		{name: "serve", summary: "run the HTTP daemon", run: runServe, usage: serveUsage},
		{name: "dev", summary: "start a local Redis Cluster and the daemon, with example holders", run: runDev, usage: devUsage},
		{name: "apply", summary: "apply one instruction or transfer from a JSON file", run: runApply, usage: applyUsage},
		{name: "relay", summary: "carry outbox events to the PostgreSQL ledger and release expired holds", run: runRelay, usage: relayUsage},
		{name: "reconcile", summary: "compare Redis with the PostgreSQL ledger; exit 1 on drift", run: runReconcile, usage: reconcileUsage},
		{name: "events", summary: "print a page of a holder's statement from the PostgreSQL ledger", run: runEvents, usage: eventsUsage},
		{name: "tail", summary: "print the feed of every holder's events as JSON lines, following it with --follow", run: runTail, usage: tailUsage},
		{name: "rebuild", summary: "write holders' Redis state from the PostgreSQL ledger", run: runRebuild, usage: rebuildUsage},
		{name: "sweep-hot", summary: "move a hot holder's receiving lanes into its lane 0 now", run: runSweepHot, usage: sweepHotUsage},
		{name: "repair", summary: "apply an event the ledger set aside, as read or corrected", run: runRepair, usage: repairUsage},
		{name: "bench", summary: "measure the engine against its baselines (starts its own cluster)", run: runBench, usage: benchUsage},
	}
}

func lookup(name string) (command, bool) {
	for _, cmd := range commands() {
		if cmd.name == name {
			return cmd, true
		}
	}
	return command{}, false
}

// run dispatches to a subcommand and returns the exit status.
func run(args []string, c cli) int {
	if len(args) == 0 {
		usage(c.stderr)
		return exitUsage
	}
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		return runHelp(args[1:], c)
	default:
		cmd, ok := lookup(name)
		if !ok {
			fmt.Fprintf(c.stderr, "engined: unknown command %q\n\n", name)
			usage(c.stderr)
			return exitUsage
		}
		return cmd.run(args[1:], c)
	}
}

// runHelp prints the general usage, or a command's with "help COMMAND".
func runHelp(args []string, c cli) int {
	switch len(args) {
	case 0:
		usage(c.stdout)
		return exitOK
	case 1:
		if cmd, ok := lookup(args[0]); ok {
			cmd.usage(c.stdout)
			return exitOK
		}
		fmt.Fprintf(c.stderr, "engined help: unknown command %q\n\n", args[0])
	default:
		fmt.Fprintln(c.stderr, "engined help: at most one command")
	}
	usage(c.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, "engined is the atomledger daemon and its tools.\n\nUsage:\n\n\tengined <command> [flags]\n\nCommands:\n\n")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "\t%-10s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\t%-10s %s\n", "help", "show this help, or a command's: engined help COMMAND")
	fmt.Fprint(w, "\nEvery command reads the same configuration; a flag wins over its environment variable:\n\n")
	printConfigUsage(w)
}
