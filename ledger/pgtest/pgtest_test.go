package pgtest

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestart_WaitsForItsPortToBeFree stops the server, lets another
// process's listener take its port (as one can in the moment the port is
// free), and restarts it: the server cannot bind, and Restart starts it
// again until the port is free, rather than failing the test that
// restarts it. While the server is down, connections are refused.
func TestRestart_WaitsForItsPortToBeFree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx)
	require.NoError(t, err)
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", s.port)

	require.NoError(t, s.Stop())
	_, err = net.DialTimeout("tcp", addr, 5*time.Second)
	assert.Error(t, err, "a stopped server refuses connections")

	// Naming the port and setting SO_REUSEADDR (net.Listen does) is the one
	// way to take a held port.
	thief, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	thiefOpen := true
	defer func() {
		if thiefOpen {
			_ = thief.Close()
		}
	}()
	restarted := make(chan error, 1)
	go func() { restarted <- s.Restart(ctx) }()
	log := filepath.Join(s.dir, "postgres.log")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(log)
		return bytes.Contains(b, []byte("Address already in use"))
	}, time.Minute, 20*time.Millisecond, "the server found its port taken")
	require.NoError(t, thief.Close())
	thiefOpen = false
	require.NoError(t, <-restarted, "Restart waits until the port is free")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err, "the server is back on its port")
	_ = c.Close()
}
