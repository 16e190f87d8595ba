package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
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

// DESIGN.md, rules for the script: a run reads the server's clock and
// builds its writes from what it read, so what its master's replica holds
// must be exactly what the master holds: the hash, the idempotency record,
// the holder's events and its expiry index entries.
func TestConformance2_ReplicaHoldsWhatTheMasterHolds(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "50.00").EarnPoints("100").GrantCoupon("c1", time.Time{})
	})
	id := newID("x")
	apply(t, instructions.New(id, h).Freeze("CNY", "5.00", "o1", time.Hour).LockCoupon("c1", "o1").
		FreezePoints("10", "o1").SettleLeg("o1", "CNY", "2.00").Debit("CNY", "1.00"))
	key := "{h:" + h + "}"
	m, err := rdb.MasterForKey(ctx, key)
	require.NoError(t, err)
	acked, err := m.Wait(ctx, 1, 10000).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), acked, "the replica has every write")
	info, err := m.Info(ctx, "replication").Result()
	require.NoError(t, err)
	replica := replicaAddr(t, info)
	r := redis.NewClient(&redis.Options{Addr: replica, OnConnect: func(ctx context.Context, cn *redis.Conn) error {
		return cn.ReadOnly(ctx).Err()
	}})
	t.Cleanup(func() { _ = r.Close() })

	slot := int(m.ClusterKeySlot(ctx, key).Val())
	outbox, expiry := slotKey(t, m, slot, "outbox"), slotKey(t, m, slot, "expiry")
	read := func(c *redis.Client) []any {
		var evs []map[string]any
		for _, msg := range c.XRange(ctx, outbox, "-", "+").Val() {
			if msg.Values["holder"] == h {
				evs = append(evs, map[string]any{"id": msg.ID, "values": msg.Values})
			}
		}
		return []any{c.HGetAll(ctx, key).Val(), c.Get(ctx, key+":tx:"+id).Val(), evs,
			c.ZScore(ctx, expiry, h+" o1").Val()}
	}
	onMaster := read(m)
	require.NotEmpty(t, onMaster[0])
	assert.Equal(t, onMaster, read(r))
}

// replicaAddr reads the first replica's address from a master's INFO
// replication ("slave0:ip=...,port=...,...").
func replicaAddr(t *testing.T, info string) string {
	t.Helper()
	v := engine.InfoField(info, "slave0")
	var ip, port string
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "ip":
			ip = val
		case "port":
			port = val
		}
	}
	require.NotEmpty(t, port, "no replica in %q", info)
	return ip + ":" + port
}
