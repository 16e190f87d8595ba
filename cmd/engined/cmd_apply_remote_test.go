package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestApply_Server sends instruction files to a running daemon with
// apply --server, as an operator would.
func TestApply_Server(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	bin := buildEngined(t)
	dir := t.TempDir()
	h := newID("h")
	open := writeFile(t, dir, "open.json", instructionJSON(newID("open"), h, `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "5.00"}]`))
	debit := writeFile(t, dir, "debit.json", instructionJSON(newID("debit"), h, `[{"op": "debit", "asset": "CNY", "amount": "9.00"}]`))

	t.Run("a result is printed as apply prints its own, exit 0", func(t *testing.T) {
		res := wantResult(t, engined(bin, "apply", "-f", open, "--server", d.url, "--token", d.token).run(t))
		assert.Equal(t, h, res.Holder)
		assert.Equal(t, int64(1), res.Seq)
		assert.False(t, res.Replayed)
		assert.Equal(t, "5.00", res.Balances["CNY"].Available)
	})
	t.Run("ENGINED_TOKEN gives the token, and the same file replays", func(t *testing.T) {
		res := wantResult(t, engined(bin, "apply", "-f", open, "--server", d.url+"/").withEnv("ENGINED_TOKEN", d.token).run(t))
		assert.True(t, res.Replayed)
	})
	t.Run("a rejection is the daemon's error object, exit 1", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", debit, "--server", d.url, "--token", d.token).run(t))
		assert.Equal(t, "INSUFFICIENT_FUNDS", body.Error.Code)
		require.NotNil(t, body.Error.OpIndex)
		assert.Equal(t, 0, *body.Error.OpIndex)
	})
	t.Run("a malformed file is the daemon's INVALID_INSTRUCTION", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", "-", "--server", d.url, "--token", d.token).withStdin(`{"id": `).run(t))
		assert.Equal(t, "INVALID_INSTRUCTION", body.Error.Code)
	})
	t.Run("a wrong token is UNAUTHENTICATED, exit 1", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", debit, "--server", d.url, "--token", "nope").run(t))
		assert.Equal(t, "UNAUTHENTICATED", body.Error.Code)
	})
	t.Run("no daemon is UNAVAILABLE, exit 1", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", debit, "--server", "http://"+deadAddr(t), "--token", d.token).run(t))
		assert.Equal(t, "UNAVAILABLE", body.Error.Code)
	})
	t.Run("a server URL with a path of no route is the daemon's NOT_FOUND, exit 1", func(t *testing.T) {
		body := wantError(t, engined(bin, "apply", "-f", debit, "--server", d.url+"/elsewhere", "--token", d.token).run(t))
		assert.Equal(t, "NOT_FOUND", body.Error.Code)
		assert.Contains(t, body.Error.Message, "/elsewhere/v1/instructions")
	})
	t.Run("an answer that is not the daemon's is UNAVAILABLE, exit 1", func(t *testing.T) {
		other := httptest.NewServer(http.NotFoundHandler()) // a plain-text 404, as a proxy's error page
		defer other.Close()
		body := wantError(t, engined(bin, "apply", "-f", debit, "--server", other.URL, "--token", d.token).run(t))
		assert.Equal(t, "UNAVAILABLE", body.Error.Code)
	})
}

func TestServerURL(t *testing.T) {
	u, err := serverURL("")
	require.NoError(t, err)
	assert.Nil(t, u, "no --server")
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":    "http://127.0.0.1:8080/v1/instructions",
		"https://ledger.example/":  "https://ledger.example/v1/instructions",
		"http://gw.example/engine": "http://gw.example/engine/v1/instructions",
	} {
		u, err := serverURL(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, u.JoinPath("v1", "instructions").String(), in)
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://x", "http://", "::"} {
		_, err := serverURL(bad)
		assert.Error(t, err, bad)
	}
}
