package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/outbox"
)

// A node client's first connection asks Redis for maintenance notifications
// (RESP3); Redis 7.0 does not know the command, and go-redis then turns them
// off by writing its options' MaintNotificationsConfig.Mode. The relay's
// watch builds its own client from the node's options meanwhile: it must
// neither read nor share that config. The connection is made on a goroutine
// that tells the test nothing, so that no synchronisation hides the race
// from -race whichever comes first; the watch must still subscribe.
func TestRelayWatch_NoRaceWithTheNodesFirstConnection(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for range 20 {
		node := redis.NewClient(&redis.Options{Addr: testCluster.Nodes[0].Addr, ContextTimeoutEnabled: true})
		cn := node.Conn()
		var wg sync.WaitGroup
		wg.Go(func() { _ = cn.Ping(ctx).Err() })
		assert.True(t, outbox.WatchUntilLive(ctx, node), "the watch subscribed")
		wg.Wait() // only now: both have touched the config
		_ = cn.Close()
		_ = node.Close()
	}
}
