package engine_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
)

// DESIGN.md, rules for the script, 8: "a single address builds a plain
// client even against a cluster unless cluster mode is asked for". Such a
// client reaches one node's slots only, and every other holder would be
// answered MOVED: Load, which a daemon's readiness rests on, refuses it
// and says what the address is, instead of reporting the library loaded.
func TestConformance2_LoadRefusesAPlainClientOfAClusterNode(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	m, err := rdb.MasterForKey(ctx, "{h:anyone}")
	require.NoError(t, err)
	plain := redis.NewClient(&redis.Options{Addr: m.Options().Addr})
	t.Cleanup(func() { _ = plain.Close() })
	err = engine.New(plain, nil).Load(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), m.Options().Addr+" is a node of a Redis Cluster")
	assert.NoError(t, engine.New(rdb, nil).Load(ctx), "a cluster client of the same cluster loads")
}
