package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawRequest writes req to the daemon as it is, bytes that net/http's client
// would not send (two Authorization headers, a non-ASCII space, a lying
// Content-Length), and reads the answer. halfClose ends the request's stream
// after req, so that a body shorter than its Content-Length ends there.
func rawRequest(t *testing.T, d *daemon, req string, halfClose bool) reply {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(d.url, "http://"), 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(time.Minute)))
	_, err = io.WriteString(c, req)
	require.NoError(t, err)
	if halfClose {
		require.NoError(t, c.(*net.TCPConn).CloseWrite())
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// TestHTTPAdversary_OnlyAnExactTokenPasses: a token passes only byte for
// byte; what HTTP itself allows around it (the scheme's case, spaces and
// tabs) is the only slack, and a request with two Authorization headers is
// refused whichever comes first.
func TestHTTPAdversary_OnlyAnExactTokenPasses(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	tok := d.token
	tests := []struct {
		name    string
		headers string
		status  int
	}{
		{"the token", "Authorization: Bearer " + tok + "\r\n", 200},
		{"the scheme in lower case", "Authorization: bearer " + tok + "\r\n", 200},
		{"two spaces after the scheme", "Authorization: Bearer  " + tok + "\r\n", 200},
		{"spaces around the value", "Authorization:   Bearer " + tok + " \t \r\n", 200},
		{"a bare LF ending the line", "Authorization: Bearer " + tok + "\n", 200},
		{"a no-break space after the token", "Authorization: Bearer " + tok + "\u00a0\r\n", 401},
		{"a next-line character before the token", "Authorization: Bearer \u0085" + tok + "\r\n", 401},
		{"an ideographic space after the token", "Authorization: Bearer " + tok + "\u3000\r\n", 401},
		{"a tab instead of the space", "Authorization: Bearer\t" + tok + "\r\n", 401},
		{"no space", "Authorization: Bearer" + tok + "\r\n", 401},
		{"a word after the token", "Authorization: Bearer " + tok + " x\r\n", 401},
		{"the token twice", "Authorization: Bearer " + tok + " " + tok + "\r\n", 401},
		{"the token and a wrong one in two headers", "Authorization: Bearer " + tok + "\r\nAuthorization: Bearer wrong\r\n", 401},
		{"a wrong one and the token in two headers", "Authorization: Bearer wrong\r\nAuthorization: Bearer " + tok + "\r\n", 401},
		{"the token in two headers", "Authorization: Bearer " + tok + "\r\nAuthorization: Bearer " + tok + "\r\n", 401},
		{"an empty header", "Authorization:\r\n", 401},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is "+fmt.Sprint(tt.status), func(t *testing.T) {
			a := rawRequest(t, d, "GET /v1/holders/"+h+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"+tt.headers+"\r\n", false)
			if tt.status == 200 {
				assert.Equal(t, 200, a.status, "%s", a)
				return
			}
			wantErrorAnswer(t, a, 401, "UNAUTHENTICATED")
			assert.NotContains(t, string(a.body), tok, "the answer names no token")
		})
	}
	t.Run("an empty token in --tokens is refused at start", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := run([]string{"serve", "--tokens", tok + ",," + tok}, cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb,
			getenv: func(string) string { return "" }})
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errb.String(), "--tokens")
		assert.Contains(t, errb.String(), "empty")
		assert.NotContains(t, errb.String(), tok)
	})
}

// TestHTTPAdversary_Bodies: the 1 MiB limit is exact, with or without a
// Content-Length; a body shorter than its Content-Length and a body with a
// Content-Encoding are refused with a clear message; none changes the holder.
func TestHTTPAdversary_Bodies(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	auth := "Bearer " + d.token
	// batchOf is a valid batch of one instruction, padded to size bytes.
	batchOf := func(size int) string {
		b := `{"instructions": [` + instructionJSON(newID("i"), h, `[{"op": "earn_points", "amount": "1"}]`) + `]}`
		return b + strings.Repeat(" ", size-len(b))
	}

	t.Run("a batch of exactly 1 MiB is applied", func(t *testing.T) {
		before := d.state(t, h)
		a := d.doWith(t, http.MethodPost, "/v1/instructions/batch", auth, strings.NewReader(batchOf(1<<20)))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.NotEqual(t, before, d.state(t, h))
	})
	before := d.state(t, h)
	t.Run("a batch of 1 MiB and one byte is 413", func(t *testing.T) {
		a := d.doWith(t, http.MethodPost, "/v1/instructions/batch", auth, strings.NewReader(batchOf(1<<20+1)))
		wantErrorAnswer(t, a, 413, "PAYLOAD_TOO_LARGE")
	})
	t.Run("a chunked body over 1 MiB without Content-Length is 413", func(t *testing.T) {
		// A reader of unknown length: the client sends it chunked.
		body := io.MultiReader(strings.NewReader(batchOf(1<<20 + 1)))
		a := d.doWith(t, http.MethodPost, "/v1/instructions/batch", auth, body)
		wantErrorAnswer(t, a, 413, "PAYLOAD_TOO_LARGE")
	})
	in := instructionJSON(newID("i"), h, `[{"op": "earn_points", "amount": "1"}]`)
	post := "POST /v1/instructions HTTP/1.1\r\nHost: x\r\nAuthorization: " + auth + "\r\n"
	t.Run("a body shorter than its Content-Length is 400", func(t *testing.T) {
		a := rawRequest(t, d, post+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(in)+50)+in, true)
		wantErrorAnswer(t, a, 400, "INVALID_INSTRUCTION")
		assert.Contains(t, string(a.body), "the body ended before its Content-Length")
		assert.NotContains(t, string(a.body), "EOF")
	})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(in))
	require.NoError(t, zw.Close())
	for name, body := range map[string]string{"a gzip body": gz.String(), "a plain body labelled gzip": in} {
		t.Run(name+" is 400", func(t *testing.T) {
			a := rawRequest(t, d, post+fmt.Sprintf("Connection: close\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(body))+body, false)
			wantErrorAnswer(t, a, 400, "INVALID_INSTRUCTION")
			assert.Contains(t, string(a.body), "Content-Encoding")
		})
	}
	assert.Equal(t, before, d.state(t, h), "no refused body changed the holder, not even its seq")
	t.Run("Content-Encoding identity is no coding", func(t *testing.T) {
		a := rawRequest(t, d, "POST /v1/instructions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: "+auth+
			"\r\nContent-Encoding: identity\r\n"+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(in))+in, false)
		// Answered, not refused for its coding (the id the refusals above used).
		assert.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.Equal(t, pointsOf(t, before)+1, pointsOf(t, d.state(t, h)), "applied")
	})
}

// pointsOf is the available points of a holder's state (JSON).
func pointsOf(t *testing.T, state string) int64 {
	t.Helper()
	i := strings.Index(state, `"points":{"available":"`)
	require.GreaterOrEqual(t, i, 0, state)
	rest := state[i+len(`"points":{"available":"`):]
	n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, '"')], 10, 64)
	require.NoError(t, err, state)
	return n
}

// TestHTTPAdversary_StatementQueries: a query that does not parse is refused,
// not read as no parameters (url.URL.Query drops what it cannot parse).
// Parameters are checked before the ledger is needed, so a daemon without
// --pg answers these.
func TestHTTPAdversary_StatementQueries(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	for _, q := range []string{"?after_seq=5;limit=2", "?limit=2;", "?%zz", "?limit=1&%zz", "?after_seq=%", "?after_seq=99999999999999999999",
		"?limit=99999999999999999999", "?after_seq=0&after_seq=0", "?limit=%201", "?after_seq=1e3"} {
		t.Run(q+" is 400", func(t *testing.T) {
			a := d.do(t, http.MethodGet, "/v1/holders/"+h+"/events"+q, "")
			wantErrorAnswer(t, a, 400, "INVALID_INSTRUCTION")
		})
	}
	t.Run("a well-formed query reaches the ledger", func(t *testing.T) {
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+h+"/events?after_seq=0&limit=5", ""), 503, "UNAVAILABLE")
	})
	for _, q := range []string{"?after=1.2.h;limit=2", "?limit=2;", "?%zz", "?after=%", "?limit=99999999999999999999",
		"?after=&after=", "?holder=h&holder=h", "?after_seq=1", "?after=1.2", "?after=1.2.h&limit=0"} {
		t.Run("the feed's "+q+" is 400", func(t *testing.T) {
			wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/events"+q, ""), 400, "INVALID_INSTRUCTION")
		})
	}
	t.Run("a well-formed query of the feed reaches the ledger", func(t *testing.T) {
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/events?after=1.2.h&limit=5&holder=h&transfer=t", ""), 503, "UNAVAILABLE")
	})
}

// TestHTTPAdversary_MetricsLabelsAreBounded: whatever a client sends (new
// holder ids, unknown paths, wrong methods, bad tokens, every kind of
// refusal), /metrics gains no series once each kind was seen once: label
// values come from the routes, the statuses and the codes, never from a
// request.
func TestHTTPAdversary_MetricsLabelsAreBounded(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	series := func() []string {
		var out []string
		for _, l := range strings.Split(string(d.doWith(t, http.MethodGet, "/metrics", "", nil).body), "\n") {
			if strings.HasPrefix(l, "atomledger_") {
				out = append(out, l[:strings.LastIndexByte(l, ' ')])
			}
		}
		return out
	}
	round := func() string {
		id := newID("hostile")
		for _, r := range []struct{ method, path, body string }{
			{http.MethodGet, "/v1/holders/" + id, ""},
			{http.MethodGet, "/v1/holders/" + id + "/events?limit=" + id, ""},
			{http.MethodGet, "/v1/holders/" + id + "/instructions/" + id, ""},
			{http.MethodGet, "/v1/transfers/" + id, ""},
			{http.MethodGet, "/" + id, ""},
			{http.MethodDelete, "/v1/holders/" + id, ""},
			{http.MethodPost, "/v1/instructions", instructionJSON(id, id, `[{"op": "credit", "asset": "CNY", "amount": "1"}]`)},
			{http.MethodPost, "/v1/instructions", instructionJSON(id, id, `[{"op": "credit", "asset": "`+id+`", "amount": "1"}]`)},
			{http.MethodPost, "/v1/instructions/batch", `{"instructions": [` + instructionJSON(id, "{"+id+"}", `[{"op": "open"}]`) + `]}`},
		} {
			d.do(t, r.method, r.path, r.body)
		}
		d.doWith(t, http.MethodGet, "/v1/holders/"+id, "Bearer "+id, nil)
		return id
	}
	series() // the scrape itself is a series
	round()
	first := series()
	id := round()
	second := series()
	assert.Equal(t, first, second, "a second round of the same kinds of requests adds no series")
	for _, l := range second {
		assert.NotContains(t, l, "hostile", "no label value comes from a request")
	}
	assert.False(t, slices.ContainsFunc(second, func(l string) bool { return strings.Contains(l, id) }))
}

// TestHTTPAdversary_SlowHeadersAreCut: a client that trickles its headers
// a line at a time is cut off by the server's header timeout; it does not
// hold a connection for ever.
func TestHTTPAdversary_SlowHeadersAreCut(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(d.url, "http://"), 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	require.NoError(t, err)
	cut := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		cut <- err
	}()
	deadline := time.After(2 * time.Minute) // readHeaderTimeout is 10s; the machine may be slow
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-cut:
			assert.Error(t, err, "the server closed the connection without an answer")
			return
		case <-tick.C:
			// A write may fail once the server closed: the read then says so.
			_, _ = io.WriteString(c, "X-Slow: 1\r\n")
		case <-deadline:
			require.FailNow(t, "a client trickling its headers still holds its connection after 2 minutes")
		}
	}
}

// TestHTTPAdversary_SIGTERMWithASlowUpload: a client that trickles its body
// when SIGTERM comes holds the shutdown no longer than the server's timeouts
// allow, and the daemon still exits 0: nothing of that request ran yet.
func TestHTTPAdversary_SIGTERMWithASlowUpload(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(d.url, "http://"), 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	// With Expect: 100-continue the daemon says "100 Continue" once its
	// handler reads the body: the request is then surely in flight (not
	// a connection still waiting to be accepted, which the shutdown would
	// not wait for).
	_, err = io.WriteString(c, "POST /v1/instructions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+d.token+
		"\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "100 Continue")
	_, err = io.WriteString(c, "{")
	require.NoError(t, err)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := io.WriteString(c, " "); err != nil {
					return
				}
			}
		}
	}()
	// The daemon serves; the shutdown waits for the slow request, which
	// keeps sending.
	wantErrorAnswer(t, d.doWith(t, http.MethodPost, "/v1/instructions", "", nil), 401, "UNAUTHENTICATED")
	d.signal(t, syscall.SIGTERM)
	assert.Equal(t, exitOK, d.wait(t, 2*time.Minute), "exit status after SIGTERM")
	assert.Contains(t, d.stderr.String(), "cut off the clients still sending or reading")
	assert.Contains(t, d.stderr.String(), `"msg":"stopped"`)
}

// TestHTTPAdversary_LedgerDownIsStillReady: readiness is Redis's (DESIGN.md,
// the daemon's table), so a daemon whose PostgreSQL is down stays ready and
// applies instructions while its statements answer 503; and SIGTERM, with
// the ledger still being dialled, exits 0.
func TestHTTPAdversary_LedgerDownIsStillReady(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil, "--pg", "postgres://ledger@"+deadAddr(t)+"/ledger?connect_timeout=1")
	assert.Equal(t, http.StatusOK, d.readyz(t).status)
	h := richHolder(t, d)
	wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+h+"/events", ""), 503, "UNAVAILABLE")
	assert.Equal(t, exitOK, d.stop(t))
}

// TestHTTPAdversary_OddPaths: what docs/openapi.yaml says of paths off the
// list; none is a 500, none reaches a handler uncleaned, none changes the
// holder.
func TestHTTPAdversary_OddPaths(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	d.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h := richHolder(t, d)
	before := d.state(t, h)
	for _, tt := range []struct {
		method, path string
		status       int
		code         string // "" for an answer without a body of ours (a redirect)
		header       string // Location or Allow
	}{
		{http.MethodGet, "/v1/holders/%2e%2e", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/holders/a%2F..%2F" + h, 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%00", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/holders/%ff", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/holders/" + h + "/", 404, "NOT_FOUND", ""},
		{http.MethodGet, "//v1/holders/" + h, 307, "", "/v1/holders/" + h},
		{http.MethodGet, "/v1/holders/" + h + "/instructions/..", 307, "", "/v1/holders/" + h},
		{http.MethodPost, "/v1//instructions", 307, "", "/v1/instructions"},
		{http.MethodPut, "/v1/instructions", 405, "METHOD_NOT_ALLOWED", "POST"},
		{http.MethodDelete, "/v1/holders/" + h, 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{http.MethodPost, "/metrics", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
	} {
		t.Run(tt.method+" "+tt.path+" is "+fmt.Sprint(tt.status), func(t *testing.T) {
			a := d.do(t, tt.method, tt.path, instructionJSON(newID("i"), h, `[{"op": "earn_points", "amount": "1"}]`))
			if tt.code != "" {
				wantErrorAnswer(t, a, tt.status, tt.code)
			}
			assert.Equal(t, tt.status, a.status, "%s", a)
			switch tt.status {
			case 307:
				assert.Equal(t, tt.header, a.header.Get("Location"))
			case 405:
				assert.Equal(t, tt.header, a.header.Get("Allow"))
			}
		})
	}
	assert.Equal(t, before, d.state(t, h))
}
