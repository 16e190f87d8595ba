package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe_RedisClientLogIsJSON serves against a Redis that does not
// answer: go-redis's own messages (its failed dials) come out as JSON lines
// of the daemon's log, never as go-redis's plain "redis: <date> pool.go:..."
// lines.
func TestServe_RedisClientLogIsJSON(t *testing.T) {
	t.Parallel()
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", deadAddr(t), "--tokens", "t1"}
	})
	d.url, d.token = "http://"+addr, "t1"
	d.waitHealthy(t)
	wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+newID("h"), ""), http.StatusServiceUnavailable, "UNAVAILABLE")
	require.Equal(t, 0, d.stop(t))

	fromRedis := 0
	for _, line := range strings.Split(strings.TrimSpace(d.stderr.String()), "\n") {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "a JSON line: %s", line)
		if entry["msg"] == "redis client" {
			fromRedis++
			assert.Equal(t, "WARN", entry["level"])
			assert.Contains(t, entry["message"], "dial", "go-redis's message: %s", line)
		}
	}
	assert.Positive(t, fromRedis, "go-redis's failed dials are in the log:\n%s", d.stderr.String())
}

// TestRelay_RedisClientLogIsStructured runs engined relay against a Redis
// that does not answer: go-redis's own messages come out as lines of the
// relay's log, never as go-redis's plain "redis: <date> pool.go:..." lines.
func TestRelay_RedisClientLogIsStructured(t *testing.T) {
	t.Parallel()
	d := startEngined(t, "", map[string]string{"ENGINED_REDIS_ADDRS": deadAddr(t), "ENGINED_PG_DSN": "postgres://nobody@" + deadAddr(t) + "/ledger"}, "relay")
	require.Eventually(t, func() bool { return strings.Contains(d.stderr.String(), `msg="redis client"`) || !d.running() },
		time.Minute, 20*time.Millisecond, "go-redis's failed dials are in the log")
	require.Equal(t, 0, d.stop(t))
	for _, line := range strings.Split(strings.TrimSpace(d.stderr.String()), "\n") {
		assert.True(t, strings.HasPrefix(line, "time="), "a line of the relay's log: %s", line)
	}
	assert.Contains(t, d.stderr.String(), `msg="redis client"`)
}
