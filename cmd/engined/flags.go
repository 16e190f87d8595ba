package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet makes the flag set of a command: errors and -h print usage on
// the command's stderr.
func newFlagSet(name string, c cli, usage func(io.Writer)) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() { usage(fs.Output()) }
	return fs
}

// parseFlags parses args. When ok is false the command is over and exits
// with status: -h was asked for, or the flag package printed the error.
func parseFlags(fs *flag.FlagSet, args []string) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}

// failUsage prints a bad invocation's message, each line prefixed with the
// command's name (errors.Join puts one error a line), and gives exitUsage.
func failUsage(c cli, name, format string, args ...any) int {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\n"+name+": ")
	fmt.Fprintf(c.stderr, "%s: %s\n", name, msg)
	return exitUsage
}
