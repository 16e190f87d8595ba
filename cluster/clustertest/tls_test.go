package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTLS_Cluster starts a cluster that speaks TLS only: a plain connection
// and a TLS one without the client certificate are refused, the harness's
// client works, and the replica has the master's writes (the cluster bus and
// replication over TLS).
func TestTLS_Cluster(t *testing.T) {
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	tc, err := NewTLS(t.TempDir())
	require.NoError(t, err)
	c, err := Start(ctx, Options{Masters: 1, Replicas: 1, TLS: tc})
	require.NoError(t, err)
	defer func() { assert.NoError(t, c.Stop()) }()

	master := c.MasterAddrs()[0]
	assert.Error(t, ping(ctx, master), "a plain connection")
	noCert := tc.ClientConfig()
	noCert.Certificates = nil
	plain := redis.NewClient(&redis.Options{Addr: master, TLSConfig: noCert, MaxRetries: -1})
	defer plain.Close()
	assert.Error(t, plain.Ping(ctx).Err(), "TLS without the client certificate")

	rdb := c.Client(nil)
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
	acks, err := rdb.Wait(ctx, 1, time.Minute).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), acks, "the replica has the write")
}

// TestTLS_Sentinel starts a master, its replica and sentinels that all speak
// TLS only, and reaches the master through the sentinels.
func TestTLS_Sentinel(t *testing.T) {
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	tc, err := NewTLS(t.TempDir())
	require.NoError(t, err)
	s, err := StartSentinel(ctx, SentinelOptions{Sentinels: 1, TLS: tc})
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Stop()) }()

	assert.Error(t, ping(ctx, s.SentinelAddrs()[0]), "a plain connection to a sentinel")
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.MasterName, SentinelAddrs: s.SentinelAddrs(),
		TLSConfig: tc.ClientConfig()})
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
}
