package outbox_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// The relay's error paths, each made to happen rather than left to chance:
// a stream gone, the removal of delivered events failing after the sink
// committed, and change notices lost.

// roundsUntil calls relay.Round until done says so, failing the test on a
// round's error or after a generous deadline.
func roundsUntil(t *testing.T, relay *outbox.Relay, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !done() {
		require.True(t, time.Now().Before(deadline), "the relay did not get there in time; stats %+v", relay.Stats())
		_, err := relay.Round(context.Background())
		require.NoError(t, err)
	}
}

// streamsLen sums the lengths of the streams keys.
func streamsLen(t *testing.T, rdb *redis.ClusterClient, keys map[string]bool) int64 {
	t.Helper()
	var n int64
	for k := range keys {
		l, err := rdb.XLen(context.Background(), k).Result()
		require.NoError(t, err)
		n += l
	}
	return n
}

// TestRelay_FindsADeletedStreamAgain deletes a followed stream, as a master
// restarted empty loses it: reading it is no failure of the round, the
// stream is written again, and its new event is delivered, every event
// once.
func TestRelay_FindsADeletedStreamAgain(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	h := newID("ng")
	key := cluster.Outbox(cluster.HolderSlot(h))
	_, err := e.Apply(ctx, instructions.New("o", h).Open().Credit("CNY", "1.00"))
	require.NoError(t, err)

	sink := &memSink{events: map[string]int{}}
	delivered := func(ev string) func() bool {
		return func() bool { sink.mu.Lock(); defer sink.mu.Unlock(); return sink.events[ev] > 0 }
	}
	// Every stream due at every round: the test drives the rounds.
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: time.Nanosecond, MaxIdle: time.Nanosecond})
	require.NoError(t, relay.Discover(ctx))
	roundsUntil(t, relay, delivered(h+"/1"))
	_, err = e.Apply(ctx, instructions.New("d", h).Debit("CNY", "0.25"))
	require.NoError(t, err)
	roundsUntil(t, relay, delivered(h+"/2"))
	roundsUntil(t, relay, func() bool { return streamsLen(t, rdb, map[string]bool{key: true}) == 0 })

	require.NoError(t, rdb.Del(ctx, key).Err())
	_, err = relay.Round(ctx)
	require.NoError(t, err, "a stream that is gone is no failure")
	_, err = e.Apply(ctx, instructions.New("c", h).Credit("CNY", "0.10"))
	require.NoError(t, err)
	require.NoError(t, relay.Discover(ctx))
	roundsUntil(t, relay, delivered(h+"/3"))

	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.Equal(t, map[string]int{h + "/1": 1, h + "/2": 1, h + "/3": 1}, sink.events, "each event once")
}

// denySink commits every write, then calls deny while it is set: a test
// has Redis refuse the relay's user what comes after a committed write.
type denySink struct {
	memSink
	deny func()
}

func (s *denySink) Write(ctx context.Context, batch []stored.Entry) error {
	if err := s.memSink.Write(ctx, batch); err != nil {
		return err
	}
	s.mu.Lock()
	deny := s.deny
	s.mu.Unlock()
	if deny != nil {
		deny()
	}
	return nil
}

// TestRelay_RemovalFailsAfterACommittedWrite has the sink commit a batch,
// then Redis refuse the removal of the events from their streams (an ACL
// without XTRIM for the relay's user, as a failover or a lost connection
// would refuse it): the round fails, nothing is counted as relayed, the
// events stay in their streams. Once Redis takes the removal again, the
// next round delivers the same events again (the sink must skip what it
// has: ledger.Ledger does), then removes them.
func TestRelay_RemovalFailsAfterACommittedWrite(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb, acl := aclUser(t, c)

	var ins []instructions.Instruction
	keys := map[string]bool{}
	for range 5 {
		h := newID("ak")
		keys[cluster.Outbox(cluster.HolderSlot(h))] = true
		ins = append(ins, instructions.New("o", h).Open().Credit("CNY", "1.00"), instructions.New("d", h).Debit("CNY", "0.50"))
	}
	for _, o := range e.ApplyBatch(ctx, ins) {
		require.NoError(t, o.Err)
	}

	var once sync.Once
	sink := &denySink{memSink: memSink{events: map[string]int{}}}
	sink.deny = func() { once.Do(func() { acl("-xtrim") }) }
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: time.Nanosecond, MaxIdle: time.Nanosecond})
	require.NoError(t, relay.Discover(ctx))
	var roundErr error
	deadline := time.Now().Add(2 * time.Minute)
	for sink.count() < len(ins) && roundErr == nil {
		require.True(t, time.Now().Before(deadline), "the relay read nothing")
		_, roundErr = relay.Round(ctx)
	}
	require.Error(t, roundErr, "the round whose removal Redis refused fails")
	assert.Contains(t, roundErr.Error(), "remove")
	assert.Contains(t, roundErr.Error(), "NOPERM")
	assert.Equal(t, len(ins), sink.count(), "the sink has every event")
	assert.Zero(t, relay.Stats().Relayed, "nothing counted as relayed")
	assert.Equal(t, int64(len(ins)), streamsLen(t, rdb, keys), "the events stay in their streams")

	sink.mu.Lock()
	sink.deny = nil
	sink.mu.Unlock()
	acl("+xtrim")
	roundsUntil(t, relay, func() bool { return streamsLen(t, rdb, keys) == 0 })
	assert.Equal(t, int64(len(ins)), relay.Stats().Relayed)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	require.Len(t, sink.events, len(ins))
	for ev, n := range sink.events {
		assert.Equal(t, 2, n, "event %s: once before the failed removal, once after", ev)
	}
}

// TestRelay_CatchesUpAfterItsNoticesWereLost cuts the relay's change-notice
// connections (CLIENT KILL) and writes at once to a followed stream and to a
// new one, so that their notices go nowhere. Every interval of the relay is
// an hour but MaxIdle, the pause before it subscribes again: the events can
// only arrive through the resynchronisation that follows a lost
// subscription, which reads every stream and looks for new ones.
func TestRelay_CatchesUpAfterItsNoticesWereLost(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	old := newID("ln")
	_, err := e.Apply(ctx, instructions.New("o", old).Open().Credit("CNY", "1.00"))
	require.NoError(t, err)

	sink := &memSink{events: map[string]int{}}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: time.Hour,
		MaxIdle: 3 * time.Second, WatchedIdle: time.Hour, DiscoverInterval: time.Hour})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = relay.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return sink.count() == 1 }, 2*time.Minute, 10*time.Millisecond)

	var masters []*redis.Client
	for _, n := range c.Nodes[:2] { // the masters
		m := redis.NewClient(&redis.Options{Addr: n.Addr})
		defer m.Close()
		masters = append(masters, m)
	}
	require.Eventually(t, func() bool {
		for _, m := range masters {
			list, err := m.ClientList(ctx).Result()
			require.NoError(t, err)
			if !strings.Contains(list, "sub=1") {
				return false
			}
		}
		return true
	}, 2*time.Minute, 20*time.Millisecond, "the relay subscribes to every master's change notices")

	for _, m := range masters {
		n, err := m.ClientKillByFilter(ctx, "type", "pubsub").Result()
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "the relay's notice connection to %s", m.Options().Addr)
	}
	fresh := newID("ln")
	for _, in := range []instructions.Instruction{
		instructions.New("d", old).Debit("CNY", "0.25"),
		instructions.New("o", fresh).Open().Credit("CNY", "1.00"),
	} {
		_, err := e.Apply(ctx, in)
		require.NoError(t, err)
	}
	// Polling would take an hour; the resubscription comes after MaxIdle.
	require.Eventually(t, func() bool { return sink.count() == 3 }, 2*time.Minute, 10*time.Millisecond,
		"events written while the notices were lost; stats %+v", relay.Stats())
	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.Equal(t, map[string]int{old + "/1": 1, old + "/2": 1, fresh + "/1": 1}, sink.events, "each event once")
}

// aclUser is a client of c as a user of its own, allowed everything at first
// and deleted when the test ends; acl changes the user's rules on every node.
func aclUser(t *testing.T, c *clustertest.Cluster) (*redis.ClusterClient, func(rules ...any)) {
	user, password := newID("relay"), newID("pw")
	acl := func(rules ...any) {
		for _, n := range c.Nodes {
			a := redis.NewClient(&redis.Options{Addr: n.Addr})
			err := a.Do(context.Background(), append([]any{"acl", "setuser", user}, rules...)...).Err()
			_ = a.Close()
			require.NoError(t, err)
		}
	}
	acl("on", ">"+password, "~*", "&*", "+@all")
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			a := redis.NewClient(&redis.Options{Addr: n.Addr})
			_ = a.Do(context.Background(), "acl", "deluser", user).Err()
			_ = a.Close()
		}
	})
	rdb := c.Client(&redis.ClusterOptions{Username: user, Password: password})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, acl
}
