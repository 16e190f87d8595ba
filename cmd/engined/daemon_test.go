package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// daemon is one engined process (serve or dev) started by a test.
type daemon struct {
	url    string
	token  string // the token requests send by default
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{} // closed once the process has exited
	err    error         // how it exited; set before done is closed
	client *http.Client
}

// syncBuffer is a bytes.Buffer that the process writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freeAddr is a local address that was free a moment ago: the daemon
// listens there, so it cannot be held for it. listenOnFreeAddr retries.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// listenOnFreeAddr starts the binary with args(addr) on an address freeAddr
// found, until the daemon holds it: another process may take the port
// between freeAddr's look and the daemon's listen, and the daemon then
// exits at once saying so. It returns once the daemon says it listens on
// the address (dev says so once its cluster and PostgreSQL run: minutes on
// a loaded machine), or it exited for another reason. (That the address
// accepts connections proves nothing: the process that took the port
// accepts them too, while the daemon is still starting.)
func listenOnFreeAddr(t *testing.T, dir string, env map[string]string, args func(addr string) []string) (*daemon, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		d := startEngined(t, dir, env, args(addr)...)
		require.Eventually(t, func() bool {
			if !d.running() {
				return true
			}
			for _, line := range strings.Split(d.stderr.String(), "\n") {
				if strings.Contains(line, "listening") && strings.Contains(line, addr) {
					return true
				}
			}
			return false
		}, 5*time.Minute, 10*time.Millisecond, "engined neither listens on %s nor exits", addr)
		if d.running() || attempt == 5 || !strings.Contains(d.stderr.String(), "address already in use") {
			return d, addr
		}
		t.Logf("%s was taken before engined listened on it: trying another address", addr)
	}
}

// startEngined starts the binary with args (and the ENGINED_* variables of
// env only) in dir ("" for the test's own), and stops it with SIGTERM when
// the test ends if it still runs.
func startEngined(t *testing.T, dir string, env map[string]string, args ...string) *daemon {
	t.Helper()
	d := &daemon{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second}}
	d.cmd = exec.Command(buildEngined(t), args...)
	d.cmd.Dir = dir
	d.cmd.Env = childEnv(env)
	d.cmd.Stdout, d.cmd.Stderr = d.stdout, d.stderr
	require.NoError(t, d.cmd.Start())
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		if d.running() {
			d.stop(t)
		}
		d.client.CloseIdleConnections()
		if t.Failed() {
			t.Logf("engined %s stderr:\n%s", args[0], d.stderr.String())
		}
	})
	return d
}

// startServe starts "engined serve" on a free port against the cluster of
// TestMain with a fresh token, and waits until it answers /healthz. args
// come after those defaults and may override them.
func startServe(t *testing.T, env map[string]string, args ...string) *daemon {
	t.Helper()
	token := newID("token")
	d, addr := listenOnFreeAddr(t, "", env, func(addr string) []string {
		return append([]string{"serve", "--listen", addr, "--redis", strings.Join(testCluster.Addrs(), ","), "--tokens", token}, args...)
	})
	d.url, d.token = "http://"+addr, token
	d.waitHealthy(t)
	return d
}

func (d *daemon) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// waitHealthy waits until /healthz answers 200 (a race-built daemon starts
// slowly on a loaded machine: the deadline is generous).
func (d *daemon) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if !d.running() {
			require.FailNow(t, "engined exited", "%v\nstderr:\n%s", d.err, d.stderr.String())
		}
		resp, err := d.client.Get(d.url + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.FailNow(t, "engined did not answer /healthz", "stderr:\n%s", d.stderr.String())
}

// readyz asks GET /readyz until it answers 200, or two minutes have passed,
// and gives the last answer: a check has readyTimeout for every master, which
// a loaded machine can miss with nothing wrong.
func (d *daemon) readyz(t *testing.T) reply {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := d.doWith(t, http.MethodGet, "/readyz", "", nil)
		if a.status == http.StatusOK || time.Now().After(deadline) {
			return a
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signal sends sig to the process.
func (d *daemon) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	require.NoError(t, d.cmd.Process.Signal(sig))
}

// wait waits for the process to exit and gives its exit code.
func (d *daemon) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(timeout):
		_ = d.cmd.Process.Kill()
		<-d.done
		require.FailNow(t, "engined did not exit in time", "stderr:\n%s", d.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(d.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, d.err)
	return 0
}

// stop sends SIGTERM and gives the exit code.
func (d *daemon) stop(t *testing.T) int {
	t.Helper()
	d.signal(t, syscall.SIGTERM)
	return d.wait(t, 2*time.Minute)
}

// reply is an HTTP reply as a test reads it.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// errorCode is the code of an error object, "" for any other body.
func (a reply) errorCode() string {
	var e errorBody
	if json.Unmarshal(a.body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

func (a reply) String() string { return http.StatusText(a.status) + " " + string(a.body) }

// do sends a request with d's token and reads the whole answer.
func (d *daemon) do(t *testing.T, method, path, body string) reply {
	t.Helper()
	return d.doWith(t, method, path, "Bearer "+d.token, strings.NewReader(body))
}

// doWith sends a request with the given Authorization header ("" for none).
func (d *daemon) doWith(t *testing.T, method, path, authorization string, body io.Reader) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.url+path, body)
	require.NoError(t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "%s %s: read the answer", method, path)
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// post applies one instruction (JSON) through the daemon.
func (d *daemon) post(t *testing.T, instruction string) reply {
	t.Helper()
	return d.do(t, http.MethodPost, "/v1/instructions", instruction)
}

// mustApply applies an instruction that must succeed.
func (d *daemon) mustApply(t *testing.T, in instructions.Instruction) instructions.Result {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	a := d.post(t, string(body))
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	var res instructions.Result
	strictJSON(t, string(a.body), &res)
	return res
}

// state reads a holder through the daemon, as raw JSON.
func (d *daemon) state(t *testing.T, holder string) string {
	t.Helper()
	a := d.do(t, http.MethodGet, "/v1/holders/"+holder, "")
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	return string(a.body)
}

// richHolder opens a holder with a balance, points, a coupon and an open
// hold, so that any change to it shows in its state.
func richHolder(t *testing.T, d *daemon) string {
	t.Helper()
	h := newID("h")
	d.mustApply(t, instructions.New(newID("setup"), h).Open().Credit("CNY", "100.00").EarnPoints("1000").
		GrantCoupon("c-1", time.Time{}).Freeze("CNY", "30.00", "order-1", 0))
	return h
}

// wantErrorAnswer checks a reply's status and code, and that its body is
// exactly an error object.
func wantErrorAnswer(t *testing.T, a reply, status int, code string) {
	t.Helper()
	assert.Equal(t, status, a.status, "%s", a)
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	var e errorBody
	strictJSON(t, string(a.body), &e)
	assert.Equal(t, code, e.Error.Code, "%s", a)
	assert.NotEmpty(t, e.Error.Message)
}

// instructionWithOps is an instruction of n credits of 1.00 CNY.
func instructionWithOps(id, holder string, n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = `{"op": "credit", "asset": "CNY", "amount": "1.00"}`
	}
	return instructionJSON(id, holder, "["+strings.Join(ops, ", ")+"]")
}
