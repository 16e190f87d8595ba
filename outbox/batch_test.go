package outbox_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// recordSink keeps every write: its events as "holder/seq", in order.
type recordSink struct {
	mu     sync.Mutex
	writes [][]string
	at     map[string]time.Time // holder/seq -> when written
}

func (s *recordSink) Write(_ context.Context, batch []stored.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := make([]string, len(batch))
	for i, e := range batch {
		w[i] = e.Event.Holder + "/" + strconv.FormatInt(e.Event.Seq, 10)
		if s.at != nil {
			s.at[w[i]] = time.Now()
		}
	}
	s.writes = append(s.writes, w)
	return nil
}

func (s *recordSink) events() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, w := range s.writes {
		n += len(w)
	}
	return n
}

// TestRelay_SplitsABacklogIntoWritesOfAtMostMaxBatch reads a backlog of
// 2,400 events over hundreds of streams in one round and checks that it
// reaches the sink in writes of at most MaxBatch, each event once, each
// holder's in seq order.
func TestRelay_SplitsABacklogIntoWritesOfAtMostMaxBatch(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	const holders, perHolder, maxBatch = 600, 4, 100
	hs := make([]string, holders)
	for i := range hs {
		hs[i] = newID("rb")
	}
	for step := range perHolder {
		var ins []instructions.Instruction
		for _, h := range hs {
			in := instructions.New("c"+strconv.Itoa(step), h).Credit("CNY", "1.00")
			if step == 0 {
				in = instructions.New("o", h).Open().Credit("CNY", "1.00")
			}
			ins = append(ins, in)
		}
		for _, o := range e.ApplyBatch(ctx, ins) {
			require.NoError(t, o.Err)
		}
	}

	sink := &recordSink{}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{MaxBatch: maxBatch})
	require.NoError(t, relay.Discover(ctx))
	n, err := relay.Round(ctx)
	require.NoError(t, err)
	require.Equal(t, holders*perHolder, n, "one round read the whole backlog")

	require.GreaterOrEqual(t, len(sink.writes), holders*perHolder/maxBatch)
	seen := map[string]int{}
	last := map[string]int{}
	for i, w := range sink.writes {
		assert.LessOrEqual(t, len(w), maxBatch, "write %d", i)
		for _, ev := range w {
			seen[ev]++
			h, s, _ := strings.Cut(ev, "/")
			seq, err := strconv.Atoi(s)
			require.NoError(t, err)
			assert.Equal(t, last[h]+1, seq, "holder %s: seq %d after %d", h, seq, last[h])
			last[h] = seq
		}
	}
	assert.Len(t, seen, holders*perHolder)
	for ev, k := range seen {
		assert.Equal(t, 1, k, "event %s delivered once", ev)
	}
	assert.Equal(t, int64(holders*perHolder), relay.Stats().Relayed)
	assert.Equal(t, int64(len(sink.writes)), relay.Stats().Batches)
}

// TestRelay_ReadsWhenNotifiedNotByPolling lets the relay go idle with every
// interval (polling, back-off, discovery) an hour long, then applies
// events to a followed stream and to a new one: only the masters' change
// notices can bring them before the deadline. Idle, it sends the masters no
// reads.
func TestRelay_ReadsWhenNotifiedNotByPolling(t *testing.T) {
	needRedis(t)
	// The notices are keyspace events where the servers send them, else
	// client tracking's.
	for _, events := range []string{"", "Etz"} {
		t.Run("notify-keyspace-events "+events, func(t *testing.T) { relayReadsWhenNotified(t, events) })
	}
}

// TestRelay_IdleWakesForDiscoveryNotEveryPoll: an idle relay whose masters
// send notices waits for a notice, the next stream due or discovery's turn,
// not for PollInterval: over two idle seconds with PollInterval 10ms and
// DiscoverInterval 500ms it runs a handful of rounds, where a relay that
// woke every PollInterval ran about two hundred.
func TestRelay_IdleWakesForDiscoveryNotEveryPoll(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	_, err := e.Apply(ctx, instructions.New("o", newID("iw")).Open().Credit("CNY", "1.00"))
	require.NoError(t, err)
	sink := &recordSink{}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: 10 * time.Millisecond, DiscoverInterval: 500 * time.Millisecond})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = relay.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return sink.events() == 1 }, 2*time.Minute, 10*time.Millisecond)
	for _, addr := range c.MasterAddrs() {
		m := redis.NewClient(&redis.Options{Addr: addr})
		defer m.Close()
		require.Eventually(t, func() bool { return strings.Contains(m.ClientList(ctx).Val(), "sub=1") },
			2*time.Minute, 20*time.Millisecond, "the relay subscribes to every master's change notices")
	}
	time.Sleep(time.Second) // the reads of every stream that follow a subscription
	before := outbox.Rounds(relay)
	time.Sleep(2 * time.Second)
	rounds := outbox.Rounds(relay) - before
	t.Logf("%d rounds in 2 idle seconds", rounds)
	assert.LessOrEqual(t, rounds, int64(20), "an idle relay wakes for discovery, not every PollInterval")
}

func relayReadsWhenNotified(t *testing.T, events string) {
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	require.NoError(t, rdb.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		return n.ConfigSet(ctx, "notify-keyspace-events", events).Err()
	}))
	old := newID("rn")
	_, err := e.Apply(ctx, instructions.New("o", old).Open().Credit("CNY", "1.00"))
	require.NoError(t, err)

	sink := &recordSink{at: map[string]time.Time{}}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: time.Hour,
		MaxIdle: time.Hour, WatchedIdle: time.Hour, DiscoverInterval: time.Hour})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = relay.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return sink.events() == 1 }, 2*time.Minute, 10*time.Millisecond)

	var masters []*redis.Client
	for _, n := range c.Nodes[:2] { // the masters
		m := redis.NewClient(&redis.Options{Addr: n.Addr})
		defer m.Close()
		masters = append(masters, m)
	}
	reads := func() int {
		n := 0
		for _, m := range masters {
			info, err := m.Info(ctx, "commandstats").Result()
			require.NoError(t, err)
			for line := range strings.Lines(info) {
				if v, ok := strings.CutPrefix(line, "cmdstat_xrange:calls="); ok {
					k, _ := strconv.Atoi(v[:strings.IndexByte(v, ',')])
					n += k
				}
			}
		}
		return n
	}
	// Settled: both masters' notices subscribed, and the reads that follow
	// a subscription (every stream once) done: no read for a second.
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
	if events != "" {
		for _, m := range masters {
			subs, err := m.PubSubNumSub(ctx, "__keyevent@0__:xadd", "__keyevent@0__:zadd").Result()
			require.NoError(t, err)
			assert.Equal(t, map[string]int64{"__keyevent@0__:xadd": 1, "__keyevent@0__:zadd": 0}, subs,
				"the relay subscribes to outbox writes, not to index ones")
		}
	}
	// A quiet second can also be a loaded machine's pause before those
	// reads: a window with reads is tried again, a few times. A relay that
	// polls while idle reads in every window.
	settle := time.Now().Add(2 * time.Minute)
	idleReads := -1
	for try := 0; try < 5 && idleReads != 0; try++ {
		for last, still := reads(), time.Now(); ; {
			time.Sleep(100 * time.Millisecond)
			n := reads()
			if n != last {
				last, still = n, time.Now()
			}
			if time.Since(still) >= time.Second {
				break
			}
			require.True(t, time.Now().Before(settle), "the relay never stops reading while idle")
		}
		for _, m := range masters {
			require.NoError(t, m.ConfigResetStat(ctx).Err())
		}
		time.Sleep(2 * time.Second)
		idleReads = reads()
	}
	assert.Zero(t, idleReads, "no reads while idle")

	fresh := newID("rn")
	applied := time.Now()
	for _, in := range []instructions.Instruction{
		instructions.New("d", old).Debit("CNY", "0.25"),
		instructions.New("o", fresh).Open().Credit("CNY", "1.00"),
	} {
		_, err := e.Apply(ctx, in)
		require.NoError(t, err)
	}
	// Without notices the relay would not read for an hour.
	require.Eventually(t, func() bool { return sink.events() == 3 }, 2*time.Minute, 5*time.Millisecond)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, ev := range []string{old + "/2", fresh + "/1"} {
		require.Contains(t, sink.at, ev)
		t.Logf("event %s relayed %v after it was applied", ev, sink.at[ev].Sub(applied).Round(time.Millisecond))
	}
}
