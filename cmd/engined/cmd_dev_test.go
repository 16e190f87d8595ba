package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// TestDev_PrintedCommandsWork runs engined dev twice in the same directory,
// as two `make run` would. Each time, every printed command is pasted into a
// shell twice, in order: the first pass must apply, the second replay. Then
// SIGINT (Ctrl-C) must stop the daemon and every Redis server, exit 0, and
// leave nothing under .run/redis.
func TestDev_PrintedCommandsWork(t *testing.T) {
	needRedis(t)
	t.Parallel()
	_, err := exec.LookPath("curl")
	require.NoError(t, err, "the commands engined dev prints use curl: install it")
	dir := t.TempDir()
	for run := 1; run <= 2; run++ {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			d, _ := listenOnFreeAddr(t, dir, nil, func(addr string) []string { return []string{"dev", "--listen", addr} })
			require.Eventually(t, func() bool {
				return strings.Contains(d.stdout.String(), "Stop: Ctrl-C") || !d.running()
			}, 5*time.Minute, 50*time.Millisecond) // dev starts a cluster and PostgreSQL, race-built
			require.True(t, d.running(), "engined dev exited:\n%s", d.stderr.String())

			var commands []string
			for _, line := range strings.Split(d.stdout.String(), "\n") {
				if line = strings.TrimSpace(line); strings.HasPrefix(line, "curl ") {
					commands = append(commands, line)
				}
			}
			require.Len(t, commands, len(devSteps), "one command per step:\n%s", d.stdout.String())
			for pass := 1; pass <= 2; pass++ {
				for i, command := range commands {
					out := paste(t, command)
					var body map[string]json.RawMessage
					require.NoError(t, json.Unmarshal(out, &body), "step %d answered %s", i+1, out)
					require.NotContains(t, body, "error", "step %d (pass %d) answered %s", i+1, pass, out)
					switch devSteps[i].path {
					case "/v1/instructions", "/v1/transfers":
						assert.Equal(t, pass == 2, string(body["replayed"]) == "true", "step %d, pass %d: %s", i+1, pass, out)
					}
					if strings.HasPrefix(devSteps[i].path, "/v1/transfers") {
						assert.Equal(t, `"committed"`, string(body["status"]), "step %d, pass %d: %s", i+1, pass, out)
					}
				}
			}
			var carol instructions.State
			require.NoError(t, json.Unmarshal(paste(t, commands[len(commands)-1]), &carol))

			// The printed reconcile command finds the dev cluster and ledger
			// (a cluster given by comma-separated addresses) and no drift.
			var reconcile string
			for _, line := range strings.Split(d.stdout.String(), "\n") {
				if line = strings.TrimSpace(line); strings.Contains(line, " reconcile --redis ") {
					reconcile = line
				}
			}
			require.NotEmpty(t, reconcile, "a reconcile command is printed:\n%s", d.stdout.String())
			assert.Contains(t, string(paste(t, reconcile)), "holders")

			// The printed events command gives carol's statement, once the
			// relay has brought her instructions to the ledger.
			var events string
			for _, line := range strings.Split(d.stdout.String(), "\n") {
				if line = strings.TrimSpace(line); strings.Contains(line, " events --holder carol ") {
					events = line
				}
			}
			require.NotEmpty(t, events, "an events command is printed:\n%s", d.stdout.String())
			require.Eventually(t, func() bool {
				out, _ := exec.Command("sh", "-c", events).Output() // exit 1 until the relay brought carol
				return strings.Contains(string(out), "carol-order-1-fill-1")
			}, 2*time.Minute, 200*time.Millisecond, "carol's statement names her partial fill")
			assert.Equal(t, instructions.Balance{Available: "381.00", Frozen: "70.00"}, carol.Balances["CNY"])
			assert.Equal(t, map[string]string{"CNY": "70.00"}, carol.Holds["order-1"].Legs)

			d.signal(t, syscall.SIGINT)
			assert.Equal(t, 0, d.wait(t, 2*time.Minute), "exit status after Ctrl-C")
			assert.Empty(t, processesUnder(t, dir), "no process left behind")
			entries, _ := os.ReadDir(filepath.Join(dir, devDir))
			assert.Empty(t, entries, "the node directories are removed")
		})
	}
}

// paste runs a printed command in a shell and gives its output.
func paste(t *testing.T, command string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("sh", "-c", command)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s\nstderr: %s", command, stderr.String())
	return out
}

// processesUnder lists the processes whose command line names a path under
// dir, as the Redis servers of engined dev do. Linux only: elsewhere it
// finds none.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) {
			found = append(found, p+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return found
}

func TestShellQuote_SurvivesTheShell(t *testing.T) {
	for _, s := range []string{"plain", "it's", `{"memo": "a 'b' \"c\" $HOME \\ ` + "`x`" + `"}`, ""} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(s)).Output()
		require.NoError(t, err)
		assert.Equal(t, s, string(out))
	}
}
