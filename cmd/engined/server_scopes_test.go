package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe_ScopedTokens serves with a tokens file of named, scoped tokens:
// a read token reads and is 403 FORBIDDEN on a write, which changes
// nothing; a write token applies; the access log names the tokens, never
// their secrets. SIGHUP reads the file again: a token taken out is 401, a
// new one works, and a file left without a token keeps the tokens in use.
func TestServe_ScopedTokens(t *testing.T) {
	needRedis(t)
	t.Parallel()
	reader, writer, reader2 := newID("s-read"), newID("s-write"), newID("s-read2")
	file := writeFile(t, t.TempDir(), "tokens", "# name scopes token\nci read "+reader+"\nbilling write "+writer+"\n")
	// The file's tokens only, without startServe's --tokens.
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", strings.Join(testCluster.Addrs(), ","), "--tokens-file", file, "--log-level", "debug"}
	})
	d.url = "http://" + addr
	d.waitHealthy(t)
	as := func(secret string) func(method, path, body string) reply {
		return func(method, path, body string) reply {
			return d.doWith(t, method, path, "Bearer "+secret, strings.NewReader(body))
		}
	}
	holder := newID("h")
	open := instructionJSON(newID("open"), holder, `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "5.00"}]`)

	wantErrorAnswer(t, as(writer)(http.MethodGet, "/v1/holders/"+holder, ""), http.StatusForbidden, "FORBIDDEN")
	a := as(reader)(http.MethodPost, "/v1/instructions", open)
	wantErrorAnswer(t, a, http.StatusForbidden, "FORBIDDEN")
	assert.Contains(t, string(a.body), `token \"ci\" has the scopes \"read\"; this route needs \"write\"`)
	wantErrorAnswer(t, as(reader)(http.MethodGet, "/v1/holders/"+holder, ""), http.StatusNotFound, "HOLDER_NOT_FOUND")
	require.Equal(t, http.StatusOK, as(writer)(http.MethodPost, "/v1/instructions", open).status)
	before := as(reader)(http.MethodGet, "/v1/holders/"+holder, "")
	require.Equal(t, http.StatusOK, before.status, "%s", before)
	for _, path := range []string{"/v1/instructions/batch", "/v1/transfers"} {
		wantErrorAnswer(t, as(reader)(http.MethodPost, path, `{}`), http.StatusForbidden, "FORBIDDEN")
	}
	debit := instructionJSON(newID("debit"), holder, `[{"op": "debit", "asset": "CNY", "amount": "1.00"}]`)
	wantErrorAnswer(t, as(reader)(http.MethodPost, "/v1/instructions", debit), http.StatusForbidden, "FORBIDDEN")
	assert.Equal(t, string(before.body), string(as(reader)(http.MethodGet, "/v1/holders/"+holder, "").body), "a forbidden write changes nothing")

	t.Run("SIGHUP reads the file again", func(t *testing.T) {
		require.NoError(t, os.WriteFile(file, []byte("ci2 read "+reader2+"\nbilling write "+writer+"\n"), 0o600))
		d.hangUp(t, "the tokens were read again")
		wantErrorAnswer(t, as(reader)(http.MethodGet, "/v1/holders/"+holder, ""), http.StatusUnauthorized, "UNAUTHENTICATED")
		assert.Equal(t, http.StatusOK, as(reader2)(http.MethodGet, "/v1/holders/"+holder, "").status)
	})
	t.Run("a file without a token, or a bad one, keeps the tokens in use", func(t *testing.T) {
		for _, content := range []string{"# nobody\n", "ci2 read,everything " + reader2 + "\n"} {
			require.NoError(t, os.WriteFile(file, []byte(content), 0o600))
			d.hangUp(t, "the tokens stay the ones in use")
			assert.Equal(t, http.StatusOK, as(reader2)(http.MethodGet, "/v1/holders/"+holder, "").status)
		}
	})
	require.Equal(t, 0, d.stop(t))

	logs := d.stderr.String()
	for _, secret := range []string{reader, writer, reader2} {
		assert.NotContains(t, logs, secret, "no secret in the log")
	}
	names := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var entry struct{ Msg, Route, Token string }
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "%s", line)
		if entry.Msg == "request" && (strings.HasPrefix(entry.Route, "POST ") || strings.HasPrefix(entry.Route, "GET /v1/")) {
			names[entry.Token]++
		}
	}
	assert.Positive(t, names["ci"], "the access log names the token: %v", names)
	assert.Positive(t, names["billing"])
	assert.Positive(t, names["ci2"])
}
