package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFlags_EveryCommandRefusesAlike: every command parses through the one
// flag helper, so each refuses a stray argument and -h the same way, and
// those that work on the ledger refuse to start without --pg.
func TestFlags_EveryCommandRefusesAlike(t *testing.T) {
	ledgerCommands := map[string]bool{"relay": true, "reconcile": true, "events": true, "tail": true, "rebuild": true, "repair": true}
	runIn := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(args, cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
		return code, out.String(), errb.String()
	}
	for _, cmd := range commands() {
		t.Run(cmd.name+" refuses a stray argument", func(t *testing.T) {
			code, stdout, stderr := runIn(cmd.name, "stray")
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "engined "+cmd.name+`: unexpected argument "stray"`)
		})
		t.Run(cmd.name+" -h prints its usage and exits 0", func(t *testing.T) {
			code, _, stderr := runIn(cmd.name, "-h")
			assert.Equal(t, exitOK, code)
			assert.Contains(t, stderr, "Usage: engined "+cmd.name)
		})
		if ledgerCommands[cmd.name] {
			t.Run(cmd.name+" without --pg is refused", func(t *testing.T) {
				code, _, stderr := runIn(cmd.name)
				assert.Equal(t, exitUsage, code)
				assert.Contains(t, stderr, "engined "+cmd.name+": --pg (ENGINED_PG_DSN) is required")
			})
		}
	}
}
