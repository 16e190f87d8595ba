package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Bad input gets a clear error: engined rebuild --holder with an id no
// holder can have is refused as such, before any server is asked (it was
// reported "not in the ledger"), as engined events refuses it.
func TestConformance2_RebuildRefusesABadHolderID(t *testing.T) {
	for id, want := range map[string]string{"a b": "must match [A-Za-z0-9_.:-]{1,64}", "{h}": "must match [A-Za-z0-9_.:-]{1,64}", "..": "is dots alone"} {
		var out, errb bytes.Buffer
		env := map[string]string{"ENGINED_PG_DSN": "postgres://ledger@127.0.0.1:1/ledger?connect_timeout=1"}
		code := run([]string{"rebuild", "--holder", id}, cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb,
			getenv: func(k string) string { return env[k] }})
		assert.Equal(t, exitUsage, code, "id %q", id)
		assert.Contains(t, errb.String(), "engined rebuild: --holder: holder", "id %q", id)
		assert.Contains(t, errb.String(), want, "id %q", id)
		assert.Empty(t, out.String())
	}
}

// A PostgreSQL that cannot be reached is said so, with exit 2, by every
// command that reads the ledger: not as a failed migration.
func TestLedgerCommands_SayPostgreSQLCannotBeReached(t *testing.T) {
	env := map[string]string{"ENGINED_PG_DSN": "postgres://ledger@127.0.0.1:1/ledger?connect_timeout=1",
		"ENGINED_REDIS_ADDRS": "127.0.0.1:1"}
	for _, args := range [][]string{{"reconcile"}, {"rebuild", "--holder", "h"}, {"events", "--holder", "h"}, {"tail"}} {
		var out, errb bytes.Buffer
		code := run(args, cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb,
			getenv: func(k string) string { return env[k] }})
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, errb.String(), "cannot connect to PostgreSQL", "%v", args)
		assert.NotContains(t, errb.String(), "migrate", "%v", args)
	}
}
