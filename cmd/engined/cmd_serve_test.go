package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

func TestServe_EveryRoute(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := newID("h")

	t.Run("GET /healthz is 200", func(t *testing.T) {
		a := d.doWith(t, http.MethodGet, "/healthz", "", nil)
		assert.Equal(t, http.StatusOK, a.status)
		assert.JSONEq(t, `{"status": "ok"}`, string(a.body))
	})
	t.Run("GET /readyz is 200 with the cluster up", func(t *testing.T) {
		a := d.readyz(t)
		assert.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.JSONEq(t, `{"status": "ready"}`, string(a.body))
	})
	t.Run("POST /v1/instructions applies and then replays", func(t *testing.T) {
		in := instructionJSON("open-"+h, h, `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "10.50"}]`)
		a := d.post(t, in)
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.Equal(t, "no-store", a.header.Get("Cache-Control"))
		var res instructions.Result
		strictJSON(t, string(a.body), &res)
		assert.Equal(t, int64(1), res.Seq)
		assert.False(t, res.Replayed)
		assert.Equal(t, instructions.Balance{Available: "10.50", Frozen: "0.00"}, res.Balances["CNY"])

		a = d.post(t, in)
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		strictJSON(t, string(a.body), &res)
		assert.True(t, res.Replayed)
		assert.Equal(t, int64(1), res.Seq)
	})
	t.Run("POST /v1/instructions/batch answers each instruction in order", func(t *testing.T) {
		a := d.do(t, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+
			instructionJSON(newID("b"), h, `[{"op": "earn_points", "amount": "5"}]`)+`,`+
			instructionJSON(newID("b"), h, `[{"op": "credit", "asset": "USD", "amount": "1.00"}]`)+`]}`)
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		var body struct{ Results []instructions.Result }
		strictJSON(t, string(a.body), &body)
		require.Len(t, body.Results, 2)
		assert.Equal(t, int64(2), body.Results[0].Seq)
		assert.Equal(t, int64(3), body.Results[1].Seq)
	})
	t.Run("GET /v1/holders/{holder} reads everything the holder has", func(t *testing.T) {
		var st instructions.State
		strictJSON(t, d.state(t, h), &st)
		assert.Equal(t, h, st.Holder)
		assert.Equal(t, "active", st.Status)
		assert.Equal(t, int64(3), st.Seq)
		assert.Equal(t, "10.50", st.Balances["CNY"].Available)
		assert.Equal(t, "1.00", st.Balances["USD"].Available)
		assert.Equal(t, "5", st.Points.Available)
	})
	t.Run("GET /metrics counts outcomes, latency, batch sizes and the Redis pool", func(t *testing.T) {
		d.post(t, instructionJSON(newID("nf"), newID("nobody"), `[{"op": "credit", "asset": "CNY", "amount": "1.00"}]`))
		a := d.doWith(t, http.MethodGet, "/metrics", "", nil)
		require.Equal(t, http.StatusOK, a.status)
		text := string(a.body)
		for _, want := range []string{
			`atomledger_instructions_total{code="OK"} 4`, // the open, its replay, the batch's two
			`atomledger_instructions_total{code="HOLDER_NOT_FOUND"} 1`,
			`atomledger_instructions_total{code="OVERFLOW"} 0`,
			`atomledger_http_request_duration_seconds_bucket{route="POST /v1/instructions",status="200",le="+Inf"} 2`,
			`atomledger_http_request_duration_seconds_count{route="POST /v1/instructions",status="422"} 1`,
			`atomledger_batch_instructions_count 1`,
			`atomledger_batch_instructions_sum 2`,
			`atomledger_redis_pool_conns `,
			`atomledger_redis_pool_hits_total `,
			`go_goroutines `,
		} {
			assert.Contains(t, text, want)
		}
		assert.NotContains(t, text, `code="UNAUTHENTICATED"`, "not an outcome of an instruction")
	})
}

// aclUser creates, on every node of the test cluster, a user that may do
// everything but call functions or run scripts: Redis then refuses FCALL with NOPERM, a reply
// no retry will change, which the engine reports as INTERNAL.
func aclUser(t *testing.T) (user, password string) {
	t.Helper()
	user, password = newID("noscripts"), newID("pw")
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	forEachNode := func(fn func(context.Context, *redis.Client) error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rdb.ForEachShard(ctx, fn))
	}
	forEachNode(func(ctx context.Context, c *redis.Client) error {
		return c.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all",
			"-eval", "-evalsha", "-eval_ro", "-evalsha_ro", "-fcall", "-fcall_ro").Err()
	})
	t.Cleanup(func() {
		forEachNode(func(ctx context.Context, c *redis.Client) error { return c.Do(ctx, "ACL", "DELUSER", user).Err() })
	})
	return user, password
}

// TestServe_EveryStatusOfTheTable reaches each status of the contract's error
// table with a real request, against the real cluster (a dead Redis for 503,
// a Redis user that may not call functions or run scripts for 500).
func TestServe_EveryStatusOfTheTable(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	user, password := aclUser(t)
	noScripts := startServe(t, map[string]string{"ENGINED_REDIS_PASSWORD": password}, "--redis-username", user)
	dead := startServe(t, nil, "--redis", deadAddr(t))
	readerSecret := newID("s-read")
	reader := startServe(t, map[string]string{"ENGINED_TOKENS_FILE": writeFile(t, t.TempDir(), "tokens", "ci read "+readerSecret+"\n")})
	reader.token = readerSecret
	// A token allowed 1 remembered rejection a second leaves 300 at once:
	// its writes wait about 5 minutes, longer than this test runs on a
	// loaded machine (10 left it 10 s, which the requests below outlasted).
	limited := startServe(t, nil, "--rejection-limit", "1")
	over := make([]string, 300)
	for i := range over {
		over[i] = instructionJSON(newID("r"), h, `[{"op": "debit", "asset": "CNY", "amount": "1000.00"}]`)
	}
	require.Equal(t, http.StatusOK, limited.do(t, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+strings.Join(over, ",")+`]}`).status)
	conflictID := newID("c")
	d.post(t, instructionJSON(conflictID, h, `[{"op": "earn_points", "amount": "1"}]`))

	credit := func(holder, amount string) string {
		return instructionJSON(newID("i"), holder, `[{"op": "credit", "asset": "CNY", "amount": "`+amount+`"}]`)
	}
	tests := []struct {
		name   string
		d      *daemon
		method string
		path   string
		auth   string // "" sends the daemon's token; "-" none
		body   string
		status int
		code   string
	}{
		{name: "malformed JSON is 400 INVALID_INSTRUCTION", body: `{"id": `, status: 400, code: "INVALID_INSTRUCTION"},
		{name: "too many decimals is 400 INVALID_AMOUNT", body: credit(h, "1.001"), status: 400, code: "INVALID_AMOUNT"},
		{name: "a space in the holder id is 400 INVALID_ID", body: credit("a b", "1.00"), status: 400, code: "INVALID_ID"},
		{name: "an unknown asset is 400 UNKNOWN_ASSET",
			body: instructionJSON(newID("i"), h, `[{"op": "credit", "asset": "XYZ", "amount": "1"}]`), status: 400, code: "UNKNOWN_ASSET"},
		{name: "65 ops is 400 TOO_MANY_OPS", body: instructionWithOps(newID("i"), h, 65), status: 400, code: "TOO_MANY_OPS"},
		{name: "no token is 401 UNAUTHENTICATED", auth: "-", body: credit(h, "1.00"), status: 401, code: "UNAUTHENTICATED"},
		{name: "a read-only token applying is 403 FORBIDDEN", d: reader, body: credit(h, "1.00"), status: 403, code: "FORBIDDEN"},
		{name: "reading an unknown holder is 404 HOLDER_NOT_FOUND", method: http.MethodGet, path: "/v1/holders/" + newID("nobody"),
			status: 404, code: "HOLDER_NOT_FOUND"},
		{name: "an instruction for an unknown holder is 422 HOLDER_NOT_FOUND", body: credit(newID("nobody"), "1.00"),
			status: 422, code: "HOLDER_NOT_FOUND"},
		{name: "reading an unknown transfer is 404 TRANSFER_NOT_FOUND", method: http.MethodGet, path: "/v1/transfers/" + newID("nothing"),
			status: 404, code: "TRANSFER_NOT_FOUND"},
		{name: "reading an unknown instruction is 404 INSTRUCTION_NOT_FOUND", method: http.MethodGet,
			path: "/v1/holders/" + h + "/instructions/" + newID("never"), status: 404, code: "INSTRUCTION_NOT_FOUND"},
		{name: "a path no route has is 404 NOT_FOUND", method: http.MethodGet, path: "/v1/nothing", status: 404, code: "NOT_FOUND"},
		{name: "a method the path's routes do not take is 405 METHOD_NOT_ALLOWED", method: http.MethodDelete,
			path: "/v1/holders/" + h, status: 405, code: "METHOD_NOT_ALLOWED"},
		{name: "an id reused with another body is 409 IDEMPOTENCY_CONFLICT",
			body: instructionJSON(conflictID, h, `[{"op": "earn_points", "amount": "2"}]`), status: 409, code: "IDEMPOTENCY_CONFLICT"},
		{name: "a body over 1 MiB is 413 PAYLOAD_TOO_LARGE", body: credit(h, "1.00") + strings.Repeat(" ", 1<<20),
			status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "a token over its rejections a second is 429 RATE_LIMITED", d: limited, body: credit(h, "1.00"), status: 429, code: "RATE_LIMITED"},
		{name: "a debit over the balance is 422 INSUFFICIENT_FUNDS",
			body: instructionJSON(newID("i"), h, `[{"op": "debit", "asset": "CNY", "amount": "1000.00"}]`), status: 422, code: "INSUFFICIENT_FUNDS"},
		{name: "Redis refusing the script is 500 INTERNAL", d: noScripts, body: credit(h, "1.00"), status: 500, code: "INTERNAL"},
		{name: "Redis unreachable is 503 UNAVAILABLE", d: dead, body: credit(h, "1.00"), status: 503, code: "UNAVAILABLE"},
		{name: "a read with Redis unreachable is 503 UNAVAILABLE", d: dead, method: http.MethodGet, path: "/v1/holders/" + h,
			status: 503, code: "UNAVAILABLE"},
		{name: "readyz with Redis unreachable is 503 UNAVAILABLE", d: dead, method: http.MethodGet, path: "/readyz",
			status: 503, code: "UNAVAILABLE"},
	}
	before := d.state(t, h)
	var mu sync.Mutex
	reached := map[int]bool{}
	t.Run("requests", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel() // the requests to a dead Redis take seconds each
				dd, method, path, auth := tt.d, tt.method, tt.path, "Bearer "
				if dd == nil {
					dd = d
				}
				if method == "" {
					method, path = http.MethodPost, "/v1/instructions"
				}
				if tt.auth == "-" {
					auth = ""
				} else {
					auth += dd.token
				}
				a := dd.doWith(t, method, path, auth, strings.NewReader(tt.body))
				wantErrorAnswer(t, a, tt.status, tt.code)
				mu.Lock()
				reached[a.status] = true
				mu.Unlock()
			})
		}
	})
	assert.Equal(t, before, d.state(t, h), "no request above changed the holder")
	assert.Equal(t, http.StatusOK, dead.doWith(t, http.MethodGet, "/healthz", "", nil).status, "alive without Redis")

	var want []int
	for _, row := range statusTable {
		want = append(want, row.status)
		if row.read != 0 {
			want = append(want, row.read)
		}
	}
	for status := range reached {
		assert.Contains(t, want, status)
	}
	for _, status := range want {
		assert.True(t, reached[status], "status %d reached by a real request", status)
	}
}

// TestServe_BadInputChangesNothing sends the bad inputs of the issue; each
// gets its status and code, and the holder is the same afterwards.
func TestServe_BadInputChangesNothing(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	credit := `[{"op": "credit", "asset": "CNY", "amount": "1.00"}]`
	tests := []struct {
		name   string
		method string
		path   string
		auth   string
		body   string
		status int
		code   string
	}{
		{name: "malformed JSON", body: `{"id": "x", "holder": "` + h + `", "ops": [`, status: 400, code: "INVALID_INSTRUCTION"},
		{name: "an amount as a JSON number",
			body: instructionJSON(newID("i"), h, `[{"op": "credit", "asset": "CNY", "amount": 1}]`), status: 400, code: "INVALID_AMOUNT"},
		{name: "an unknown field in the instruction",
			body: `{"id": "x-1", "holder": "` + h + `", "ops": ` + credit + `, "priority": 1}`, status: 400, code: "INVALID_INSTRUCTION"},
		{name: "an unknown field in an op",
			body: instructionJSON(newID("i"), h, `[{"op": "credit", "asset": "CNY", "amount": "1.00", "note": "x"}]`), status: 400, code: "INVALID_INSTRUCTION"},
		{name: "braces in the holder id of the body", body: instructionJSON(newID("i"), "{"+h+"}", credit), status: 400, code: "INVALID_ID"},
		{name: "a space in the holder id of the body", body: instructionJSON(newID("i"), h+" x", credit), status: 400, code: "INVALID_ID"},
		{name: "braces in the holder id of the path", method: http.MethodGet, path: "/v1/holders/%7B" + h + "%7D", status: 400, code: "INVALID_ID"},
		{name: "a space in the holder id of the path", method: http.MethodGet, path: "/v1/holders/" + h + "%20x", status: 400, code: "INVALID_ID"},
		{name: "a slash in the holder id of the path", method: http.MethodGet, path: "/v1/holders/" + h + "%2Fx", status: 400, code: "INVALID_ID"},
		{name: "65 ops", body: instructionWithOps(newID("i"), h, 65), status: 400, code: "TOO_MANY_OPS"},
		{name: "a 2 MiB body", body: instructionJSON(newID("i"), h, credit) + strings.Repeat(" ", 2<<20), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "an instruction over 64 KiB", body: instructionJSON(newID("i"), h, credit) + strings.Repeat(" ", 64<<10), status: 400, code: "INVALID_INSTRUCTION"},
		{name: "no token", auth: "-", body: instructionJSON(newID("i"), h, credit), status: 401, code: "UNAUTHENTICATED"},
		{name: "a wrong token", auth: "Bearer " + newID("wrong"), body: instructionJSON(newID("i"), h, credit), status: 401, code: "UNAUTHENTICATED"},
		{name: "another scheme", auth: "Basic dXNlcjpwYXNz", body: instructionJSON(newID("i"), h, credit), status: 401, code: "UNAUTHENTICATED"},
		{name: "no token on a read", method: http.MethodGet, path: "/v1/holders/" + h, auth: "-", status: 401, code: "UNAUTHENTICATED"},
	}
	before := d.state(t, h)
	for _, tt := range tests {
		t.Run(tt.name+" is "+tt.code, func(t *testing.T) {
			method, path, auth := tt.method, tt.path, tt.auth
			if method == "" {
				method, path = http.MethodPost, "/v1/instructions"
			}
			switch auth {
			case "":
				auth = "Bearer " + d.token
			case "-":
				auth = ""
			}
			a := d.doWith(t, method, path, auth, strings.NewReader(tt.body))
			wantErrorAnswer(t, a, tt.status, tt.code)
			if tt.status == http.StatusUnauthorized {
				assert.True(t, strings.HasPrefix(a.header.Get("WWW-Authenticate"), `Bearer realm="atomledger"`), a.header.Get("WWW-Authenticate"))
			}
			assert.Equal(t, before, d.state(t, h), "the holder is unchanged")
		})
	}
}

func TestServe_Batch(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	batch := func(entries ...string) string { return `{"instructions": [` + strings.Join(entries, ", ") + `]}` }
	post := func(t *testing.T, body string) reply {
		return d.do(t, http.MethodPost, "/v1/instructions/batch", body)
	}

	t.Run("a malformed entry is that entry's error only", func(t *testing.T) {
		credit := instructionJSON(newID("ok"), h, `[{"op": "credit", "asset": "CNY", "amount": "2.00"}]`)
		a := post(t, batch(
			credit,
			`{"id": "u-1", "holder": "`+h+`", "ops": [{"op": "open"}], "colour": "red"}`,
			instructionJSON(newID("n"), h, `[{"op": "credit", "asset": "CNY", "amount": 5}]`),
			instructionJSON(newID("f"), h, `[{"op": "debit", "asset": "CNY", "amount": "9999.00"}]`),
			`"not an instruction"`,
			credit,
		))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		var body struct{ Results []json.RawMessage }
		strictJSON(t, string(a.body), &body)
		require.Len(t, body.Results, 6)
		codes := make([]string, len(body.Results))
		for i, r := range body.Results {
			codes[i] = reply{body: r}.errorCode()
		}
		assert.Equal(t, []string{"", "INVALID_INSTRUCTION", "INVALID_AMOUNT", "INSUFFICIENT_FUNDS", "INVALID_INSTRUCTION", ""}, codes)
		var first, last instructions.Result
		strictJSON(t, string(body.Results[0]), &first)
		strictJSON(t, string(body.Results[5]), &last)
		assert.Equal(t, "72.00", first.Balances["CNY"].Available)
		assert.False(t, first.Replayed)
		assert.True(t, last.Replayed, "the same instruction later in the batch replays")
		assert.Equal(t, first.Seq, last.Seq)
	})
	t.Run("a batch of 1000 is applied", func(t *testing.T) {
		entries := make([]string, maxBatch)
		for i := range entries {
			entries[i] = instructionJSON(newID("p"), h, `[{"op": "earn_points", "amount": "1"}]`)
		}
		a := post(t, batch(entries...))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		var body struct{ Results []instructions.Result }
		strictJSON(t, string(a.body), &body)
		require.Len(t, body.Results, maxBatch)
		assert.Equal(t, "2000", body.Results[maxBatch-1].Points.Available, "1000 points from the set-up, 1000 from the batch")
	})
	before := d.state(t, h)
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"a body that is not JSON", `{"instructions": [`, 400, "INVALID_INSTRUCTION"},
		{"an unknown field beside instructions", `{"instructions": [], "atomic": true}`, 400, "INVALID_INSTRUCTION"},
		{"no instructions", `{"instructions": []}`, 400, "INVALID_INSTRUCTION"},
		{"an empty object", `{}`, 400, "INVALID_INSTRUCTION"},
		{"more than 1000 instructions", batch(slices.Repeat([]string{instructionJSON("x", h, `[{"op": "open"}]`)}, maxBatch+1)...), 400, "INVALID_INSTRUCTION"},
		{"a body over 1 MiB", batch(instructionJSON(newID("b"), h, `[{"op": "open"}]`)) + strings.Repeat(" ", 1<<20), 413, "PAYLOAD_TOO_LARGE"},
	} {
		t.Run(tt.name+" is refused as a whole", func(t *testing.T) {
			wantErrorAnswer(t, post(t, tt.body), tt.status, tt.code)
		})
	}
	assert.Equal(t, before, d.state(t, h))
}

func TestServe_Tokens(t *testing.T) {
	needRedis(t)
	t.Parallel()
	fileToken := newID("file-token")
	tokens := writeFile(t, t.TempDir(), "tokens", "# one token a line\n\n  "+fileToken+"  \n")
	d := startServe(t, nil, "--tokens-file", tokens)
	h := newID("h")

	t.Run("a token of --tokens-file is accepted beside those of --tokens", func(t *testing.T) {
		a := d.doWith(t, http.MethodPost, "/v1/instructions", "Bearer "+fileToken,
			strings.NewReader(instructionJSON(newID("o"), h, `[{"op": "open"}]`)))
		assert.Equal(t, http.StatusOK, a.status, "%s", a)
		a = d.doWith(t, http.MethodGet, "/v1/holders/"+h, "Bearer "+d.token, nil)
		assert.Equal(t, http.StatusOK, a.status, "%s", a)
	})
	t.Run("the scheme is case-insensitive", func(t *testing.T) {
		a := d.doWith(t, http.MethodGet, "/v1/holders/"+h, "bearer "+d.token, nil)
		assert.Equal(t, http.StatusOK, a.status, "%s", a)
	})
	t.Run("a wrong token is told invalid_token", func(t *testing.T) {
		a := d.doWith(t, http.MethodGet, "/v1/holders/"+h, "Bearer "+d.token+"x", nil)
		wantErrorAnswer(t, a, http.StatusUnauthorized, "UNAUTHENTICATED")
		assert.Equal(t, `Bearer realm="atomledger", error="invalid_token"`, a.header.Get("WWW-Authenticate"))
	})
	t.Run("health, readiness and metrics need no token", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/metrics"} {
			assert.Equal(t, http.StatusOK, d.doWith(t, http.MethodGet, path, "", nil).status, path)
		}
		assert.Equal(t, http.StatusOK, d.readyz(t).status, "/readyz")
	})
	t.Run("an unknown route is 404 and a wrong method 405", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, d.do(t, http.MethodGet, "/v1/nothing", "").status)
		a := d.do(t, http.MethodGet, "/v1/instructions", "")
		assert.Equal(t, http.StatusMethodNotAllowed, a.status)
		assert.Equal(t, "POST", a.header.Get("Allow"))
	})
}

// TestServe_RefusesBadInvocations needs no Redis: serve stops before it.
func TestServe_RefusesBadInvocations(t *testing.T) {
	t.Parallel()
	bin := buildEngined(t)
	for _, tt := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{name: "no tokens", args: []string{"serve"}, want: "no bearer tokens"},
		{name: "an empty tokens file", args: []string{"serve", "--tokens-file", os.DevNull}, want: "no bearer tokens"},
		{name: "a missing tokens file", args: []string{"serve", "--tokens-file", "/no/such/file"}, want: "--tokens-file"},
		{name: "a token with a space in ENGINED_TOKENS", args: []string{"serve"}, env: []string{"ENGINED_TOKENS", "a b"}, want: "ENGINED_TOKENS (--tokens)"},
		{name: "a certificate without a key", args: []string{"serve", "--tokens", "t", "--tls-cert", "c.pem"}, want: "--tls-cert and --tls-key go together"},
		{name: "an unreadable certificate", args: []string{"serve", "--tokens", "t", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, want: "--tls-cert, --tls-key"},
		{name: "a bad log level", args: []string{"serve", "--dev", "--log-level", "loud"}, want: `--log-level "loud"`},
		{name: "dev with --redis", args: []string{"dev", "--redis", "127.0.0.1:6379"}, want: "--redis: dev starts its own Redis Cluster"},
		{name: "a bad --server URL", args: []string{"apply", "-f", "-", "--server", "127.0.0.1:8080"}, want: `--server "127.0.0.1:8080"`},
	} {
		t.Run(tt.name+" exits 2", func(t *testing.T) {
			e := engined(bin, tt.args...).withEnv(tt.env...).run(t)
			assert.Equal(t, 2, e.code, "stderr: %s", e.stderr)
			assert.Contains(t, e.stderr, tt.want)
			assert.Empty(t, e.stdout)
		})
	}
	t.Run("help serve and help dev print their usage", func(t *testing.T) {
		assert.Contains(t, engined(bin, "help", "serve").run(t).stdout, "Usage: engined serve")
		assert.Contains(t, engined(bin, "help", "dev").run(t).stdout, "Usage: engined dev")
	})
}

func TestServe_DevWithoutTokensIsOpen(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--dev", "--listen", addr, "--redis", strings.Join(testCluster.Addrs(), ",")}
	})
	d.url = "http://" + addr
	d.waitHealthy(t)
	h := newID("h")
	a := d.doWith(t, http.MethodPost, "/v1/instructions", "", strings.NewReader(instructionJSON(newID("o"), h, `[{"op": "open"}]`)))
	assert.Equal(t, http.StatusOK, a.status, "%s", a)
	assert.Equal(t, 0, d.stop(t))
	assert.Contains(t, d.stderr.String(), "/v1/ is open to anyone")
}

func TestServe_TLS(t *testing.T) {
	needRedis(t)
	t.Parallel()
	certFile, keyFile, pool := selfSignedCert(t)
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", strings.Join(testCluster.Addrs(), ","),
			"--tokens", "t1", "--tls-cert", certFile, "--tls-key", keyFile}
	})
	d.url, d.token = "https://"+addr, "t1"
	d.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	d.waitHealthy(t)
	a := d.do(t, http.MethodGet, "/v1/holders/"+newID("nobody"), "")
	wantErrorAnswer(t, a, http.StatusNotFound, "HOLDER_NOT_FOUND")
	assert.Contains(t, d.stderr.String(), `"tls":true`)
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key, and gives
// a pool that trusts it.
func selfSignedCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "engined test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServe_Logs checks the request log: JSON lines, one per request, at
// debug for a success or a rejection and warn for a wrong token, with the
// code; and no
// secret anywhere in the log.
func TestServe_Logs(t *testing.T) {
	needRedis(t)
	t.Parallel()
	wrong := newID("wrong-token")
	d := startServe(t, map[string]string{"ENGINED_PG_DSN": "postgres://ledger:pg-secret-42@db/ledger"}, "--log-level", "debug")
	h := newID("h")
	d.mustApply(t, instructions.New(newID("o"), h).Open())
	d.doWith(t, http.MethodGet, "/v1/holders/"+h, "Bearer "+wrong, nil)
	d.post(t, instructionJSON(newID("d"), h, `[{"op": "debit", "asset": "CNY", "amount": "1.00"}]`))
	require.Equal(t, 0, d.stop(t))

	logs := d.stderr.String()
	for _, secret := range []string{d.token, wrong, "pg-secret-42"} {
		assert.NotContains(t, logs, secret)
	}
	var requests []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "a JSON line: %s", line)
		switch entry["msg"] {
		case "request":
			if entry["route"] != "GET /healthz" {
				requests = append(requests, entry)
			}
		case "starting":
			cfg, _ := entry["config"].(map[string]any)
			assert.Equal(t, true, cfg["pg_set"], "the configuration is printed, without its secrets")
			assert.Equal(t, "cluster", cfg["redis_mode"])
		}
	}
	require.Len(t, requests, 3, "one line per request: %s", logs)
	assert.Equal(t, "DEBUG", requests[0]["level"])
	assert.Equal(t, "POST /v1/instructions", requests[0]["route"])
	assert.Equal(t, h, requests[0]["holder"])
	assert.Equal(t, "WARN", requests[1]["level"])
	assert.Equal(t, "UNAUTHENTICATED", requests[1]["code"])
	assert.EqualValues(t, 401, requests[1]["status"])
	assert.Equal(t, "DEBUG", requests[2]["level"], "a business rejection is no warning")
	assert.Equal(t, "INSUFFICIENT_FUNDS", requests[2]["code"])
}

// TestServe_SIGTERMFinishesRequestsInFlight stops the daemon during a stream
// of concurrent requests: every request gets a whole answer or a connection
// error, never half an answer; every answered credit is applied and no other;
// the process exits 0. Requests are surely in flight at the signal: the
// holder's master holds the daemon's calls (CLIENT PAUSE WRITE) from before
// the signal until the daemon says it is shutting down, and at least one of
// them is answered after.
func TestServe_SIGTERMFinishesRequestsInFlight(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := newID("h")
	d.mustApply(t, instructions.New(newID("o"), h).Open())

	const workers = 8
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	t.Cleanup(client.CloseIdleConnections)
	var answered, late, refused atomic.Int64
	var sent atomic.Bool // set once SIGTERM is sent
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				body := instructionJSON(fmt.Sprintf("w%d-%d", w, i), h, `[{"op": "credit", "asset": "CNY", "amount": "1.00"}]`)
				req, err := http.NewRequest(http.MethodPost, d.url+"/v1/instructions", strings.NewReader(body))
				if err != nil {
					problem("%v", err)
					return
				}
				req.Header.Set("Authorization", "Bearer "+d.token)
				resp, err := client.Do(req)
				if err != nil {
					if !sent.Load() {
						problem("request before SIGTERM: %v", err)
					}
					refused.Add(1)
					return // the daemon is going: every later request would fail the same way
				}
				data, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					problem("half an answer (%s, %d bytes): %v", resp.Status, len(data), err)
					return
				}
				var res instructions.Result
				if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &res) != nil || res.Replayed {
					problem("unexpected answer %s: %s", resp.Status, data)
					return
				}
				answered.Add(1)
				if sent.Load() {
					late.Add(1)
				}
			}
		})
	}
	require.Eventually(t, func() bool { return answered.Load() >= 100 }, 2*time.Minute, 5*time.Millisecond)
	ctx := context.Background()
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	master, err := rdb.MasterForKey(ctx, cluster.Holder(h))
	require.NoError(t, err)
	require.NoError(t, master.Do(ctx, "client", "pause", "600000", "write").Err())
	t.Cleanup(func() { _ = master.Do(ctx, "client", "unpause").Err() })
	require.Eventually(t, func() bool {
		n, err := clustertest.HeldCalls(ctx, master)
		return err == nil && n > 0
	}, 2*time.Minute, 5*time.Millisecond, "no call of the daemon reached the paused master")
	sent.Store(true)
	d.signal(t, syscall.SIGTERM)
	require.Eventually(t, func() bool { return strings.Contains(d.stderr.String(), "shutting down") }, 2*time.Minute, 5*time.Millisecond)
	require.NoError(t, master.Do(ctx, "client", "unpause").Err())
	assert.Equal(t, 0, d.wait(t, 2*time.Minute), "exit status after SIGTERM")
	wg.Wait()

	assert.Empty(t, problems)
	assert.Positive(t, late.Load(), "a request in flight at the signal was answered")
	assert.Equal(t, int64(workers), refused.Load(), "each worker ends on a connection error")
	assert.Contains(t, d.stderr.String(), `"msg":"stopped"`)
	st, err := engine.New(rdb, nil).State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d.00", answered.Load()), st.Balances["CNY"].Available,
		"every answered credit was applied, and only those")
	t.Logf("%d credits answered, %d of them after the signal", answered.Load(), late.Load())
}
