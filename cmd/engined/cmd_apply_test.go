package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// errorBody is the error object as a client reads it.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		OpIndex *int   `json:"op_index"`
		Message string `json:"message"`
		// Replayed marks a rejection answered from the idempotency record.
		Replayed bool `json:"replayed"`
	} `json:"error"`
}

// wantResult checks that the run printed a result, indented, and exited 0.
func wantResult(t *testing.T, e exited) instructions.Result {
	t.Helper()
	require.Equal(t, 0, e.code, "stdout: %s\nstderr: %s", e.stdout, e.stderr)
	assert.True(t, strings.HasPrefix(e.stdout, "{\n  \""), "pretty-printed with two spaces: %s", e.stdout)
	var res instructions.Result
	strictJSON(t, e.stdout, &res)
	return res
}

// wantError checks that the run printed an error object and exited 1.
func wantError(t *testing.T, e exited) errorBody {
	t.Helper()
	require.Equal(t, 1, e.code, "stdout: %s\nstderr: %s", e.stdout, e.stderr)
	assert.True(t, strings.HasPrefix(e.stdout, "{\n  \"error\": {\n    \""), "pretty-printed with two spaces: %s", e.stdout)
	var body errorBody
	strictJSON(t, e.stdout, &body)
	assert.NotEmpty(t, body.Error.Code)
	assert.NotEmpty(t, body.Error.Message)
	return body
}

func strictJSON(t *testing.T, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "stdout: %s", s)
	assert.False(t, dec.More(), "one JSON value on stdout: %s", s)
}

// writeFile writes an instruction file into dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// instructionJSON is an instruction file with the given ops (JSON array).
func instructionJSON(id, holder, ops string) string {
	return `{"id": "` + id + `", "holder": "` + holder + `", "ops": ` + ops + "}\n"
}

// deadAddr is a local address where nothing listens, for the whole test: a
// socket bound to it and never listening keeps the port from every other
// process, and the kernel refuses connections to it. (A port found by
// listening and closing again is free only until someone else takes it.)
func deadAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// TestApply_Rejections covers what the engine refuses before Redis: it
// needs no server, so it runs under -short too.
func TestApply_Rejections(t *testing.T) {
	t.Parallel()
	bin := buildEngined(t)
	dir := t.TempDir()

	t.Run("a malformed file is INVALID_INSTRUCTION", func(t *testing.T) {
		f := writeFile(t, dir, "malformed.json", `{"id": "m-1", "holder": "u1", "ops": [{"op": "open"}`)
		body := wantError(t, engined(bin, "apply", "-f", f).run(t))
		assert.Equal(t, "INVALID_INSTRUCTION", body.Error.Code)
		assert.Nil(t, body.Error.OpIndex, "no single op failed")
	})
	t.Run("an unknown field is INVALID_INSTRUCTION", func(t *testing.T) {
		f := writeFile(t, dir, "unknown.json", `{"id": "m-2", "holder": "u1", "ops": [{"op": "open"}], "colour": "red"}`)
		body := wantError(t, engined(bin, "apply", "-f", f).run(t))
		assert.Equal(t, "INVALID_INSTRUCTION", body.Error.Code)
	})
	t.Run("an amount given as a JSON number is INVALID_AMOUNT", func(t *testing.T) {
		f := writeFile(t, dir, "number.json", instructionJSON("m-3", "u1", `[{"op": "credit", "asset": "CNY", "amount": 80}]`))
		body := wantError(t, engined(bin, "apply", "-f", f).run(t))
		assert.Equal(t, "INVALID_AMOUNT", body.Error.Code)
	})
	t.Run("more decimals than the asset's scale is INVALID_AMOUNT at its op", func(t *testing.T) {
		in := instructionJSON("m-4", "u1", `[{"op": "credit", "asset": "CNY", "amount": "1.00"}, {"op": "credit", "asset": "CNY", "amount": "1.001"}]`)
		body := wantError(t, engined(bin, "apply", "-f", "-").withStdin(in).run(t))
		assert.Equal(t, "INVALID_AMOUNT", body.Error.Code)
		require.NotNil(t, body.Error.OpIndex)
		assert.Equal(t, 1, *body.Error.OpIndex)
	})
	t.Run("ENGINED_ASSETS reaches the engine", func(t *testing.T) {
		in := instructionJSON("m-5", "u1", `[{"op": "credit", "asset": "USDT", "amount": "1"}]`)
		body := wantError(t, engined(bin, "apply", "-f", "-").withStdin(in).withEnv("ENGINED_ASSETS", "CNY:2").run(t))
		assert.Equal(t, "UNKNOWN_ASSET", body.Error.Code)
	})
	t.Run("an instruction over 64 KiB is INVALID_INSTRUCTION", func(t *testing.T) {
		in := instructionJSON("m-6", "u1", `[{"op": "open"}]`) + strings.Repeat(" ", instructions.MaxPayload)
		body := wantError(t, engined(bin, "apply", "-f", "-").withStdin(in).run(t))
		assert.Equal(t, "INVALID_INSTRUCTION", body.Error.Code)
		assert.Equal(t, "- is over 65536 bytes, the most an instruction or a transfer may have", body.Error.Message,
			"read in part: neither its size nor its kind is known")
	})
}

// TestApply runs the binary against the cluster of TestMain, as an operator
// would: one holder through open, credit, a rejected debit and replays.
func TestApply(t *testing.T) {
	needRedis(t)
	t.Parallel()
	bin := buildEngined(t)
	dir := t.TempDir()
	addrs := strings.Join(testCluster.Addrs(), ",")
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	eng := engine.New(rdb, nil)
	state := func(t *testing.T, holder string) instructions.State {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, err := eng.State(ctx, holder)
		require.NoError(t, err)
		return st
	}

	holder := newID("h")
	openFile := writeFile(t, dir, "open.json", instructionJSON(newID("open"), holder, `[{"op": "open"}]`))
	credit := instructionJSON(newID("credit"), holder, `[{"op": "credit", "asset": "CNY", "amount": "100.50"}]`)
	debitFile := writeFile(t, dir, "debit.json", instructionJSON(newID("debit"), holder,
		`[{"op": "credit", "asset": "CNY", "amount": "1.00"}, {"op": "debit", "asset": "CNY", "amount": "500.00"}]`))

	t.Run("open a holder from a file", func(t *testing.T) {
		res := wantResult(t, engined(bin, "apply", "-f", openFile, "--redis", addrs).run(t))
		assert.Equal(t, holder, res.Holder)
		assert.Equal(t, int64(1), res.Seq)
		assert.False(t, res.Replayed)
	})
	t.Run("credit from stdin", func(t *testing.T) {
		res := wantResult(t, engined(bin, "apply", "-f", "-", "--redis", addrs).withStdin(credit).run(t))
		assert.Equal(t, int64(2), res.Seq)
		assert.False(t, res.Replayed)
		assert.Equal(t, instructions.Balance{Available: "100.50", Frozen: "0.00"}, res.Balances["CNY"])
	})
	t.Run("a failing debit is INSUFFICIENT_FUNDS at its op and changes nothing", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", debitFile, "--redis", addrs).run(t))
		assert.Equal(t, "INSUFFICIENT_FUNDS", body.Error.Code)
		require.NotNil(t, body.Error.OpIndex)
		assert.Equal(t, 1, *body.Error.OpIndex)
		assert.False(t, body.Error.Replayed)
		st := state(t, holder)
		assert.Equal(t, int64(2), st.Seq)
		assert.Equal(t, "100.50", st.Balances["CNY"].Available, "the credit of op 0 is not kept")
	})
	t.Run("the same file again is replayed", func(t *testing.T) {
		res := wantResult(t, engined(bin, "apply", "-f", "-", "--redis", addrs).withStdin(credit).run(t))
		assert.True(t, res.Replayed)
		assert.Equal(t, int64(2), res.Seq)
		assert.Equal(t, "100.50", res.Balances["CNY"].Available)
		assert.Equal(t, int64(2), state(t, holder).Seq)
	})
	t.Run("the same rejected file again gets the same rejection", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", debitFile, "--redis", addrs).run(t))
		assert.Equal(t, "INSUFFICIENT_FUNDS", body.Error.Code)
		require.NotNil(t, body.Error.OpIndex)
		assert.Equal(t, 1, *body.Error.OpIndex)
		assert.True(t, body.Error.Replayed)
	})
	t.Run("ENGINED_REDIS_ADDRS is honoured", func(t *testing.T) {
		in := instructionJSON(newID("env"), holder, `[{"op": "debit", "asset": "CNY", "amount": "0.50"}]`)
		res := wantResult(t, engined(bin, "apply", "-f", "-").withStdin(in).withEnv("ENGINED_REDIS_ADDRS", addrs).run(t))
		assert.Equal(t, int64(3), res.Seq)
		assert.Equal(t, "100.00", res.Balances["CNY"].Available)
	})
	t.Run("--redis wins over ENGINED_REDIS_ADDRS", func(t *testing.T) {
		in := instructionJSON(newID("flag"), holder, `[{"op": "earn_points", "amount": "7"}]`)
		// One seed address: cluster mode only because ENGINED_REDIS_CLUSTER asks for it.
		res := wantResult(t, engined(bin, "apply", "-f", "-", "--redis", testCluster.Addrs()[0]).withStdin(in).
			withEnv("ENGINED_REDIS_ADDRS", deadAddr(t), "ENGINED_REDIS_CLUSTER", "true").run(t))
		assert.Equal(t, int64(4), res.Seq)
		require.NotNil(t, res.Points)
		assert.Equal(t, "7", res.Points.Available)
	})
	t.Run("--redis naming a dead server is UNAVAILABLE even with a good ENGINED_REDIS_ADDRS", func(t *testing.T) {
		in := instructionJSON(newID("dead"), holder, `[{"op": "earn_points", "amount": "1"}]`)
		body := wantError(t, engined(bin, "apply", "-f", "-", "--redis", deadAddr(t)).withStdin(in).
			withEnv("ENGINED_REDIS_ADDRS", addrs).run(t))
		assert.Equal(t, "UNAVAILABLE", body.Error.Code)
		assert.Equal(t, int64(4), state(t, holder).Seq)
	})
	t.Run("--idempotency-ttl reaches the engine", func(t *testing.T) {
		id := newID("ttl")
		in := instructionJSON(id, holder, `[{"op": "earn_points", "amount": "1"}]`)
		wantResult(t, engined(bin, "apply", "-f", "-", "--redis", addrs, "--idempotency-ttl", "90m").withStdin(in).run(t))
		ttl, err := rdb.PTTL(context.Background(), cluster.Tx(holder, id)).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, 89*time.Minute)
		assert.LessOrEqual(t, ttl, 90*time.Minute)
	})
}
