package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger/pgtest"
)

// Each test here was written against a defect an adversarial pass found:
// its comment says what happened before the fix, the test what holds now.

// advRun runs an engined command in process.
func advRun(args []string, stdin string, env map[string]string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

// Before (the defect this test caught): `engined apply` with Redis down prints the UNAVAILABLE error
// object and exits 1, as documented, but its stderr also gets go-redis's own
// plain log lines, "redis: <date> pool.go:770: redis: connection pool: failed
// to dial after 5 attempts: ...": a Go source file and line of a dependency.
// What should: stdout holds the error object and stderr nothing (or a line of
// engined's own). `engined help apply`: "prints on stdout either the result
// (exit status 0) or the error object ... (exit status 1) ... A bad flag, a
// bad environment value or an unreadable FILE exits 2 with a message on
// stderr"; serve and relay route go-redis through redis.SetLogger
// (server.go:79, cmd_relay.go:58; server_redislog_test.go calls the plain
// "redis: <date> pool.go:..." line a defect), apply (cmd_apply.go runApply)
// and sweep-hot, rebuild, reconcile never do.
func TestCLIAdversary_ApplyWithRedisDownPrintsNoGoRedisLines(t *testing.T) {
	needRedis(t)
	bin := buildEngined(t)
	in := instructionJSON(newID("down"), newID("h"), `[{"op": "open"}]`)
	e := engined(bin, "apply", "-f", "-").withStdin(in).withEnv("ENGINED_REDIS_ADDRS", deadAddr(t)).run(t)
	body := wantError(t, e)
	assert.Equal(t, "UNAVAILABLE", body.Error.Code)
	assert.NotContains(t, e.stderr, "pool.go", "go-redis's internal log lines leak on stderr")
	assert.NotContains(t, e.stderr, "redis: 20", "go-redis's internal log lines leak on stderr")
}

// Before (the defect this test caught): `engined sweep-hot --holder "a b"` (an id no holder can
// have) prints an INVALID_ID error object on stdout and exits 1, the status
// documented for "a lane is missing or a transfer failed (tried again by the
// next sweep)": a script reads it as a sweep to retry.
// What should: exit 2 with a message on stderr, as rebuild and events refuse
// a bad --holder (TestConformance2_RebuildRefusesABadHolderID).
// `engined help sweep-hot`: "Exit status: 0 when swept, 1 when a lane is
// missing or a transfer failed (tried again by the next sweep), 2 when it
// could not run." Code: cmd_sweep_hot.go runSweepHot does not check the id
// (checkReadID) and maps every engine error to printOutcome (exit 1).
func TestCLIAdversary_SweepHotBadHolderIDExits2(t *testing.T) {
	needRedis(t)
	env := map[string]string{"ENGINED_REDIS_ADDRS": strings.Join(testCluster.Addrs(), ",")}
	code, out, errs := advRun([]string{"sweep-hot", "--holder", "a b"}, "", env)
	assert.Equal(t, exitUsage, code, "stdout: %s\nstderr: %s", out, errs)
	assert.Contains(t, errs, "engined sweep-hot: --holder")
	assert.Empty(t, out)
}

// Before (the defect this test caught): `engined sweep-hot` with Redis unreachable exits 1 (an
// UNAVAILABLE error object), the status of "a lane is missing or a transfer
// failed".
// What should: exit 2, "when it could not run": no lane was read, no
// transfer tried. `engined help sweep-hot`: "Exit status: 0 when swept, 1
// when a lane is missing or a transfer failed (tried again by the next
// sweep), 2 when it could not run." Code: cmd_sweep_hot.go runSweepHot,
// `if err != nil && got.Holder == "" { return printOutcome(c, nil, err) }`.
func TestCLIAdversary_SweepHotWithRedisDownExits2(t *testing.T) {
	needRedis(t)
	env := map[string]string{"ENGINED_REDIS_ADDRS": deadAddr(t)}
	code, out, errs := advRun([]string{"sweep-hot", "--holder", newID("m")}, "", env)
	assert.Equal(t, exitUsage, code, "stdout: %s\nstderr: %s", out, errs)
}

// Before (the defect this test caught): `engined events --holder H --after garbage` prints an
// INVALID_INSTRUCTION error object on stdout and exits 1, the status the
// usage reserves for "the ledger does not know the holder"; the same bad
// value given to --after-seq (-1) or --limit (0), or a bad --after to
// `engined tail`, exits 2 with a message on stderr.
// What should: exit 2, message on stderr, nothing on stdout. `engined help
// events`: "Exit status: 0 for a page, 1 when the ledger does not know the
// holder (an error object is printed), 2 when it could not run." Code:
// cmd_events.go runEvents passes --after to led.StatementAfter unchecked and
// prints any *instructions.Error as exit 1.
func TestCLIAdversary_EventsBadCursorExits2(t *testing.T) {
	needRedis(t)
	pg := pgtest.StartForTest(t)
	env := map[string]string{"ENGINED_PG_DSN": pg.NewDatabase(t)}
	code, out, errs := advRun([]string{"events", "--holder", "h1", "--after", "garbage"}, "", env)
	require.NotEqual(t, exitOK, code)
	assert.Equal(t, exitUsage, code, "stdout: %s\nstderr: %s", out, errs)
	assert.Empty(t, out)
	assert.Contains(t, errs, "engined events:")
}
