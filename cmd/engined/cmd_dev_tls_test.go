package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDev_TLS runs engined dev --tls: the API is served over HTTPS with a
// certificate made for the run, the printed commands trust its authority
// and work, and the certificates go when dev stops.
func TestDev_TLS(t *testing.T) {
	needRedis(t)
	t.Parallel()
	dir := t.TempDir()
	d, addr := listenOnFreeAddr(t, dir, nil, func(addr string) []string { return []string{"dev", "--tls", "--listen", addr} })
	require.Eventually(t, func() bool {
		return strings.Contains(d.stdout.String(), "Stop: Ctrl-C") || !d.running()
	}, 5*time.Minute, 50*time.Millisecond) // dev starts a cluster and PostgreSQL, race-built
	require.True(t, d.running(), "engined dev exited:\n%s", d.stderr.String())
	assert.Contains(t, d.stdout.String(), "https://"+addr)

	var commands []string
	for _, line := range strings.Split(d.stdout.String(), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "curl ") {
			commands = append(commands, line)
		}
	}
	require.Len(t, commands, len(devSteps), "one command per step:\n%s", d.stdout.String())
	caFile := filepath.Join(dir, devTLSDir, "ca.pem")
	for i, command := range commands {
		assert.Contains(t, command, "--cacert '"+caFile+"'", "step %d", i+1)
		var body map[string]json.RawMessage
		out := paste(t, command)
		require.NoError(t, json.Unmarshal(out, &body), "step %d answered %s", i+1, out)
		require.NotContains(t, body, "error", "step %d answered %s", i+1, out)
	}
	// Plain HTTP is not served: Go's server answers it 400.
	resp, err := d.client.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	d.signal(t, syscall.SIGINT)
	assert.Equal(t, 0, d.wait(t, 2*time.Minute), "exit status after Ctrl-C")
	_, err = os.Stat(filepath.Join(dir, devTLSDir))
	assert.True(t, os.IsNotExist(err), "the certificates are removed: %v", err)
}
