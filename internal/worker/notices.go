// Change notices: each master tells a worker, on a connection of its own,
// which of its per-slot keys were written (an outbox, an expiry index, a
// transfer index), so that the relay reads a stream when it is written, and
// the sweeper and transfer recovery read an index when it changes, rather
// than polling.

package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/atomledger/atomledger/cluster"
)

// Watch receives the change notices of one master.
type Watch struct {
	stop context.CancelFunc
	live atomic.Bool // subscribed: every write of the master since is noticed
}

// Live tells whether w is subscribed: every write of its master since is
// noticed.
func (w *Watch) Live() bool { return w.live.Load() }

// Stop ends w without waiting for it (the WaitGroup of SyncWatches does).
func (w *Watch) Stop() { w.stop() }

// WatchPing is how long a watch waits for a notice before it pings its
// master, and then for the answer before it gives up on the connection.
const WatchPing = 10 * time.Second

// SyncWatches starts watch for every master of rdb that watches lacks, and
// stops those of what is no longer a master.
func SyncWatches(ctx context.Context, rdb redis.UniversalClient, watches map[string]*Watch, wg *sync.WaitGroup,
	watch func(context.Context, *redis.Client, *Watch)) {
	masters := map[string]*redis.Client{}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		_ = c.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			masters[n.Options().Addr] = n
			return nil
		})
	case *redis.Client:
		masters[c.Options().Addr] = c
	}
	for addr, w := range watches {
		if masters[addr] == nil {
			w.stop()
			delete(watches, addr)
		}
	}
	for addr, n := range masters {
		if watches[addr] == nil {
			wctx, stop := context.WithCancel(ctx)
			w := &Watch{stop: stop}
			watches[addr] = w
			wg.Go(func() { watch(wctx, n, w) })
		}
	}
}

// AllLive tells whether watches has any watch and every one is subscribed.
func AllLive(watches map[string]*Watch) bool {
	for _, w := range watches {
		if !w.live.Load() {
			return false
		}
	}
	return len(watches) > 0
}

// What a watch is told of where the server sends keyspace events: entries
// added to an outbox stream (the relay), or to a sorted-set index, expiry or
// transfers (the due workers). Each worker hears only its own: a notice
// costs the server a write to every subscriber, and each subscriber a read.
const (
	OutboxWrites = "xadd"
	IndexWrites  = "zadd"
)

// WatchNotices is a watch of node's notices of writes (OutboxWrites or
// IndexWrites), handed to notice (all: every key may have changed unseen)
// until ctx is done; after a failure it waits retry before it subscribes
// again; ping is WatchPing but in tests. who names the worker in the log.
func WatchNotices(ctx context.Context, node *redis.Client, w *Watch, writes string, notice func(keys []string, all bool),
	retry, ping time.Duration, log *slog.Logger, who string) {
	// The node's settings (address, auth, TLS, dialer, timeouts), pointers
	// included. go-redis writes through one of them while the node runs:
	// the maintenance notifications config, whose Mode the node's first
	// connection turns off on a server without them. The copy gets a config
	// of its own, off (a RESP2 connection cannot receive those notices),
	// so that the new client neither reads the node's (a data race) nor
	// writes it.
	o := *node.Options()
	o.Protocol = 2
	o.ClientSideCache, o.ClientSideCacheConfig = nil, nil
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	tracking := func(ctx context.Context, cn *redis.Conn) error {
		id, err := cn.ClientID(ctx).Result()
		if err != nil {
			return err
		}
		args := []any{"client", "tracking", "on", "redirect", id, "bcast"}
		for _, p := range cluster.SlotKeyPrefixes() {
			args = append(args, "prefix", p)
		}
		return cn.Do(ctx, args...).Err()
	}
	var c *redis.Client
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	for ctx.Err() == nil {
		// Keyspace events where the server sends them (notify-keyspace-events
		// with E, t and z): a write of a hash or a string costs the server
		// nothing then, where a broadcast tracking prefix costs every written
		// key a walk over all the prefixes (docs/events.md, Change notices).
		if c != nil {
			_ = c.Close() // the last subscription's, done with: its settings change below
		}
		o.OnConnect = nil
		channels := keyEventChannels(ctx, &o, writes)
		if channels == nil {
			o.OnConnect, channels = tracking, []string{"__redis__:invalidate"}
		}
		c = redis.NewClient(&o)
		ps := c.Subscribe(ctx, channels...)
		// A receive blocked on the socket does not see ctx end: closing the
		// subscription wakes it, so that the worker stops at once.
		unblock := context.AfterFunc(ctx, func() { _ = ps.Close() })
		receiveNotices(ctx, ps, w, notice, ping, log, who)
		unblock()
		if w.live.Swap(false) {
			notice(nil, true) // back to polling until subscribed again
		}
		_ = ps.Close()
		Sleep(ctx, retry)
	}
}

// receiveNotices hands one subscription's notices to notice until it fails.
func receiveNotices(ctx context.Context, ps *redis.PubSub, w *Watch, notice func(keys []string, all bool),
	ping time.Duration, log *slog.Logger, who string) {
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, ping)
		var nerr interface{ Timeout() bool }
		switch m := msg.(type) {
		case *redis.Subscription:
			w.live.Store(true)
			notice(nil, true)
		case *redis.Message:
			if strings.HasPrefix(m.Channel, "__keyevent@") {
				notice([]string{m.Payload}, false)
				break
			}
			notice(m.PayloadSlice, m.Payload == "" && m.PayloadSlice == nil) // no keys: a flush
		case nil:
			if ctx.Err() != nil || !errors.As(err, &nerr) || !nerr.Timeout() || pinged {
				if ctx.Err() == nil {
					log.Warn(who+": change notices lost, polling meanwhile", "err", err)
				}
				return
			}
			if ps.Ping(ctx) != nil {
				return
			}
			pinged = true
			continue
		}
		pinged = false
	}
}

// keyEventChannels gives the keyevent channel of writes (OutboxWrites or
// IndexWrites) when node sends those events, or nil: notify-keyspace-events
// must have E (keyevent) and the class of writes (t for streams, z for
// sorted sets, or A). A server that refuses CONFIG GET is taken not to send
// them. o are the watch's settings, without an OnConnect.
func keyEventChannels(ctx context.Context, o *redis.Options, writes string) []string {
	// A client of its own, from the watch's copy of the node's settings:
	// a command on the node's client would open a connection of the node's
	// at the same time as its first one (TestRelayWatch_NoRaceWithTheNodesFirstConnection).
	c := redis.NewClient(o)
	defer c.Close()
	v, err := c.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		return nil
	}
	flags := v["notify-keyspace-events"]
	has := func(c string) bool { return strings.Contains(flags, c) || strings.Contains(flags, "A") && c != "E" }
	class := map[string]string{OutboxWrites: "t", IndexWrites: "z"}[writes]
	if !has("E") || class == "" || !has(class) {
		return nil
	}
	return []string{fmt.Sprintf("__keyevent@%d__:%s", o.DB, writes)}
}
