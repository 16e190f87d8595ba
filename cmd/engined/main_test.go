package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
)

// testCluster is a real 3-master, 3-replica cluster shared by the package's
// tests, started by TestMain (or the one ATOMLEDGER_TEST_REDIS names).
var testCluster *clustertest.Cluster

// raceBuild is set by race_test.go: the binary under test is then built with
// the race detector too.
var raceBuild bool

func TestMain(m *testing.M) {
	flag.Parse()
	code := runTests(m)
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func runTests(m *testing.M) int {
	if testing.Short() {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := clustertest.StartForMain(ctx, clustertest.Options{Masters: 3, Replicas: 1})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start redis cluster:", err)
		return 1
	}
	testCluster = c
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop redis cluster:", err)
		code = max(code, 1)
	}
	return code
}

// needRedis skips under -short; otherwise the cluster of TestMain is there.
func needRedis(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis; skipped under -short")
	}
}

// The binary under test, built once for the package by buildEngined.
var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	builtBin  string
	buildErr  error
)

// buildEngined builds the binary, once for all the tests of the package, and
// returns its path.
func buildEngined(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "engined-test-"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "engined")
		if runtime.GOOS == "windows" {
			builtBin += ".exe"
		}
		args := []string{"build", "-o", builtBin}
		if raceBuild {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return builtBin
}

// proc is one run of the binary.
type proc struct {
	bin   string
	args  []string
	env   map[string]string // ENGINED_* variables; those of the test's own environment are dropped
	stdin string
}

// exited is how a run ended.
type exited struct {
	code   int
	stdout string
	stderr string
}

func (p proc) run(t *testing.T) exited {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, p.args...)
	cmd.Env = childEnv(p.env)
	cmd.Stdin = strings.NewReader(p.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	e := exited{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Exited():
		e.code = ee.ExitCode()
	case err != nil:
		require.NoError(t, err, "run engined %q\nstderr: %s", p.args, e.stderr)
	}
	return e
}

// childEnv is the environment of a run of the binary: the test's own without
// its ENGINED_* variables, then env. A race-built binary sleeps a second
// before it exits unless GORACE says otherwise (atexit_sleep_ms defaults to
// 1000): a second per run adds up.
func childEnv(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ENGINED_") && !strings.HasPrefix(kv, "GORACE=") {
			out = append(out, kv)
		}
	}
	out = append(out, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func engined(bin string, args ...string) proc { return proc{bin: bin, args: args} }

func (p proc) withEnv(kv ...string) proc {
	p.env = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		p.env[kv[i]] = kv[i+1]
	}
	return p
}

func (p proc) withStdin(s string) proc { p.stdin = s; return p }

func newID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func TestCLI(t *testing.T) {
	t.Parallel()
	bin := buildEngined(t)

	t.Run("help prints the usage on stdout and exits 0", func(t *testing.T) {
		e := engined(bin, "help").run(t)
		assert.Equal(t, 0, e.code)
		assert.Contains(t, e.stdout, "apply")
		for _, o := range options {
			assert.Contains(t, e.stdout, "--"+o.flag)
			assert.Contains(t, e.stdout, o.env)
		}
		assert.Empty(t, e.stderr)
	})
	t.Run("help apply prints the usage of apply", func(t *testing.T) {
		e := engined(bin, "help", "apply").run(t)
		assert.Equal(t, 0, e.code)
		assert.Contains(t, e.stdout, "engined apply -f FILE")
	})
	t.Run("no command prints the usage on stderr and exits 2", func(t *testing.T) {
		e := engined(bin).run(t)
		assert.Equal(t, 2, e.code)
		assert.Empty(t, e.stdout)
		assert.Contains(t, e.stderr, "Usage:")
	})
	t.Run("an unknown command prints the usage on stderr and exits 2", func(t *testing.T) {
		e := engined(bin, "frobnicate").run(t)
		assert.Equal(t, 2, e.code)
		assert.Empty(t, e.stdout)
		assert.Contains(t, e.stderr, `unknown command "frobnicate"`)
		assert.Contains(t, e.stderr, "Usage:")
	})
	t.Run("apply without -f exits 2", func(t *testing.T) {
		e := engined(bin, "apply").run(t)
		assert.Equal(t, 2, e.code)
		assert.Empty(t, e.stdout)
		assert.Contains(t, e.stderr, "-f FILE is required")
	})
	t.Run("apply of a missing file exits 2", func(t *testing.T) {
		e := engined(bin, "apply", "-f", filepath.Join(t.TempDir(), "missing.json")).run(t)
		assert.Equal(t, 2, e.code)
		assert.Empty(t, e.stdout)
		assert.Contains(t, e.stderr, "missing.json")
	})
	t.Run("an unknown flag exits 2", func(t *testing.T) {
		e := engined(bin, "apply", "-f", "-", "--no-such-flag").run(t)
		assert.Equal(t, 2, e.code)
		assert.Contains(t, e.stderr, "no-such-flag")
	})
	t.Run("a bad --idempotency-ttl exits 2 naming the flag", func(t *testing.T) {
		e := engined(bin, "apply", "-f", "-", "--idempotency-ttl", "forever").run(t)
		assert.Equal(t, 2, e.code)
		assert.Empty(t, e.stdout)
		assert.Contains(t, e.stderr, `--idempotency-ttl "forever"`)
	})
	t.Run("a bad ENGINED_IDEMPOTENCY_TTL exits 2 naming the variable and the flag", func(t *testing.T) {
		e := engined(bin, "apply", "-f", "-").withEnv("ENGINED_IDEMPOTENCY_TTL", "-1h").run(t)
		assert.Equal(t, 2, e.code)
		assert.Contains(t, e.stderr, "ENGINED_IDEMPOTENCY_TTL (--idempotency-ttl)")
	})
}
