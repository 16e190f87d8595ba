package engine_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
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
	acked, err := m.Wait(ctx, 1, time.Minute).Result()
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
	v := cluster.InfoField(info, "slave0")
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

// DESIGN.md, rules for the script, 1 and 2, watched with MONITOR on the
// holder's master during one run that sets and deletes fields: every read
// comes before the first write; the holder hash is written by one HSET,
// then at most one HDEL, and nothing touches it after that delete; the
// idempotency record and the outbox are each written once. (The expiry
// index may get a ZADD and, last, a ZREM: a hold opened and another closed.)
func TestConformance2_ScriptWritesEachKeyOnceDeletesLast(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Credit("USD", "5.00").Freeze("CNY", "2.00", "o1", time.Hour)
	})
	key := "{h:" + h + "}"
	m, err := rdb.MasterForKey(ctx, key)
	require.NoError(t, err)
	lines := monitor(t, m, func() {
		apply(t, instructions.New(newID("w"), h).Settle("o1").Credit("CNY", "1.00").Freeze("USD", "1.00", "o2", time.Hour))
	})

	type call struct{ name, key string }
	var run []call
	for _, l := range lines {
		if !strings.Contains(l, " lua] ") {
			continue
		}
		f := strings.Fields(l[strings.Index(l, " lua] ")+len(" lua] "):])
		c := call{name: strings.ToUpper(strings.Trim(f[0], `"`))}
		if len(f) > 1 {
			c.key = strings.Trim(f[1], `"`)
		}
		run = append(run, c)
	}
	require.NotEmpty(t, run, "the script's calls: %q", lines)
	t.Logf("the script's calls: %v", run)
	writes := map[string]bool{"XADD": true, "ZADD": true, "HSET": true, "SET": true, "HDEL": true, "ZREM": true}
	firstWrite, hset, hdel := -1, -1, -1
	perKey := map[string][]string{}
	for i, c := range run {
		if writes[c.name] {
			if firstWrite < 0 {
				firstWrite = i
			}
			perKey[c.key] = append(perKey[c.key], c.name)
		} else if firstWrite >= 0 {
			t.Errorf("read %s %s after the first write: %v", c.name, c.key, run)
		}
		if c.key == key && c.name == "HSET" {
			hset = i
		}
		if c.key == key && c.name == "HDEL" {
			hdel = i
		}
		if hdel >= 0 && i > hdel && c.key == key {
			t.Errorf("%s of the holder hash after its HDEL: %v", c.name, run)
		}
	}
	assert.Equal(t, []string{"HSET", "HDEL"}, perKey[key], "one HSET, then one HDEL: %v", run)
	assert.Less(t, hset, hdel)
	var txWrites, outboxWrites int
	for k, ws := range perKey {
		switch {
		case strings.HasPrefix(k, key+":tx:"):
			txWrites += len(ws)
		case strings.HasSuffix(k, ":outbox"):
			outboxWrites += len(ws)
			assert.Equal(t, []string{"XADD"}, ws)
		case strings.HasSuffix(k, ":expiry"):
			assert.Equal(t, []string{"ZADD", "ZREM"}, ws, "a ZADD, and the ZREM last of all")
		}
	}
	assert.Equal(t, 1, txWrites, "the idempotency record written once")
	assert.Equal(t, 1, outboxWrites, "one event")
	assert.Equal(t, "ZREM", run[len(run)-1].name, "the deletes come last: %v", run)
}

// monitor runs fn while MONITOR watches node, and gives the lines MONITOR
// printed, up to a marker sent after fn.
func monitor(t *testing.T, node *redis.Client, fn func()) []string {
	t.Helper()
	conn, err := net.Dial("tcp", node.Options().Addr)
	require.NoError(t, err)
	defer conn.Close()
	rd := bufio.NewReader(conn)
	_, err = conn.Write([]byte("MONITOR\r\n"))
	require.NoError(t, err)
	ok, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", ok)
	fn()
	marker := newID("monitor-end")
	require.NoError(t, node.Echo(context.Background(), marker).Err())
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	var lines []string
	for {
		l, err := rd.ReadString('\n')
		require.NoError(t, err, "MONITOR never showed the marker")
		if strings.Contains(l, marker) {
			return lines
		}
		lines = append(lines, strings.TrimSpace(l))
	}
}
