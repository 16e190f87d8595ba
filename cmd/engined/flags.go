package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// commandFlags is a command's flag set, the shared configuration's flags
// among them: -h and a bad flag print the command's usage on its stderr, and
// every refusal is a message there with exitUsage.
type commandFlags struct {
	name string // "engined apply"
	fs   *flag.FlagSet
	cf   *configFlags
	c    cli
	// argHint is added to the refusal of a stray argument.
	argHint string
}

// newCommandFlags makes the flag set of "engined name"; the command adds its
// own flags to fs before parse.
func newCommandFlags(name string, c cli, usage func(io.Writer)) *commandFlags {
	f := &commandFlags{name: "engined " + name, c: c}
	f.fs = flag.NewFlagSet(f.name, flag.ContinueOnError)
	f.fs.SetOutput(c.stderr)
	f.fs.Usage = func() { usage(f.fs.Output()) }
	return f
}

// parse adds the shared configuration's flags, parses args and refuses a
// stray argument. When ok is false the command is over and exits with
// status: -h was asked for, or the refusal was printed.
func (f *commandFlags) parse(args []string) (status int, ok bool) {
	f.cf = addConfigFlags(f.fs)
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if n := f.fs.NArg(); n > 0 {
		if afterSecret(args[:len(args)-n]) {
			// Most likely the rest of a secret cut at a space: not echoed.
			return f.fail("unexpected argument after a secret's flag: quote a value that has a space%s", f.argHint), false
		}
		return f.fail("unexpected argument %q%s", f.fs.Arg(0), f.argHint), false
	}
	return exitOK, true
}

// afterSecret tells whether the last flag of args is one whose value is a
// secret (config.go's secret options, and apply's --token).
func afterSecret(args []string) bool {
	for i := len(args) - 1; i >= 0 && i >= len(args)-2; i-- {
		if name, ok := strings.CutPrefix(args[i], "-"); ok {
			name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
			return name == "token" || slices.ContainsFunc(options, func(o option) bool { return o.secret && o.flag == name })
		}
	}
	return false
}

// config resolves the shared configuration: flags first, then the
// environment, then the defaults.
func (f *commandFlags) config() (*Config, error) { return f.cf.config(f.c.getenv) }

// parseLedger is parse then config for a command that works on the ledger:
// --pg is required. A nil *Config comes with the exit status to return.
func (f *commandFlags) parseLedger(args []string) (*Config, int) {
	if status, ok := f.parse(args); !ok {
		return nil, status
	}
	cfg, err := f.config()
	if err != nil {
		return nil, f.fail("%v", err)
	}
	if cfg.PGDSN == "" {
		return nil, f.fail("--pg (ENGINED_PG_DSN) is required")
	}
	return cfg, exitOK
}

// withClusterHint adds to msg, after sep, how to name a Redis Cluster when
// msg shows that one node of it was named as a plain server: a MOVED answer,
// or the engine's refusal to load the library there.
func withClusterHint(msg, sep string) string {
	if strings.Contains(msg, "MOVED ") || strings.Contains(msg, "is a node of a Redis Cluster") {
		msg += sep + "the address is a node of a Redis Cluster: say so with --redis-cluster (ENGINED_REDIS_CLUSTER=1), or give every node's address"
	}
	return msg
}

// fail prints a refusal, each line prefixed with the command's name
// (errors.Join puts one error a line), and gives exitUsage. A MOVED answer
// means one cluster node was named as a plain server: it says how to name a
// cluster.
func (f *commandFlags) fail(format string, args ...any) int {
	msg := withClusterHint(fmt.Sprintf(format, args...), "\n")
	msg = strings.ReplaceAll(msg, "\n", "\n"+f.name+": ")
	fmt.Fprintf(f.c.stderr, "%s: %s\n", f.name, msg)
	return exitUsage
}
