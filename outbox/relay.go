package outbox

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/internal/worker"
)

// Options configure a Relay. A nil *Options or a zero field means the
// default.
type Options struct {
	// MaxBatch is the most events one sink write holds: what a round read
	// beyond it goes in further writes, one after the other. It
	// also sizes the reads: each stream read in a round gives MaxBatch
	// divided by the streams due, at least 16, at most 256. Default 1000.
	MaxBatch int
	// PollInterval is the shortest wait after a round that found nothing
	// (the wait lasts until a notice comes, a stream is due or discovery's
	// turn comes), and the first step of the back-off of an idle stream.
	// Default 50ms.
	PollInterval time.Duration
	// MaxIdle is the longest an idle stream waits between two reads while
	// its master sends the relay no change notices (see Relay). Default 500ms.
	MaxIdle time.Duration
	// WatchedIdle is the longest an idle stream waits between two reads
	// while its master sends change notices: they make reads prompt, this
	// is only a safety net. Default 30s.
	WatchedIdle time.Duration
	// DiscoverInterval is how often the relay measures backlog and lag and,
	// unless every master sends change notices, looks for outbox streams it
	// does not follow yet. Default 2s.
	DiscoverInterval time.Duration
	// TrimInterval is the shortest time between two removals from one
	// stream (XTRIM) while the relay is busy: what the sink has of a stream
	// stays in it meanwhile, passed over by the relay's reads, so that a
	// stream written to all the time costs one XTRIM per TrimInterval, not
	// one per write, and as many reads fewer (a removal is a write the
	// change notices tell of, so a read). A round that finds nothing to
	// read, and Run's end, remove everything delivered. Default 1s.
	TrimInterval time.Duration
	// ReplicaTimeout is how long a round waits (WAIT) for a replica of a
	// master to have what the relay read from it; entries not on a replica
	// by then wait for a later round. Keep it below the client's read
	// timeout. Default 500ms.
	ReplicaTimeout time.Duration
	// Logger receives errors and recoveries. Default slog.Default().
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxBatch <= 0 {
		r.MaxBatch = 1000
	}
	if r.PollInterval <= 0 {
		r.PollInterval = 50 * time.Millisecond
	}
	if r.MaxIdle <= 0 {
		r.MaxIdle = 500 * time.Millisecond
	}
	if r.WatchedIdle <= 0 {
		r.WatchedIdle = 30 * time.Second
	}
	if r.DiscoverInterval <= 0 {
		r.DiscoverInterval = 2 * time.Second
	}
	if r.TrimInterval <= 0 {
		r.TrimInterval = time.Second
	}
	if r.ReplicaTimeout <= 0 {
		r.ReplicaTimeout = 500 * time.Millisecond
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r
}

// Stats are a relay's counters and gauges, for metrics.
type Stats struct {
	Relayed  int64 // events written to the sink and deleted from Redis
	Batches  int64 // sink writes that succeeded
	Errors   int64 // failed rounds (Redis, sink, or no replica in time), each retried
	Streams  int64 // outbox streams followed
	Backlog  int64 // events in the outboxes not yet delivered, in the streams behind (at the last discovery; all of them while notices are lost)
	LagMs    int64 // age of the oldest undelivered event (at the last discovery), ms: in a stream behind, or how long the last write's oldest event waited for it
	SinkDown bool  // the last sink write failed
}

// Relay carries the events of every slot's outbox to a Sink: it reads each
// stream (XRANGE), writes what it read to the sink in batches, and only once
// the sink has committed them removes them from the stream (XTRIM MINID:
// every entry up to the last one written). It never trims what the sink
// has not committed, and never by length.
//
// Where the relay stopped is the head of each stream: what is in a stream
// has not been committed, or was committed and not yet removed (a relay
// stopped, killed or failing between the two). Reading from the head then
// hands the sink some events it has again, which it skips (the Sink
// contract); none it lacks is ever passed over. So the relay keeps no
// position in Redis or in the sink: a relay restarted, several relays at
// once, a master restarted empty or a replica promoted without the last
// entries all read the streams as they are. In memory it remembers only
// what it delivered from a stream and has not removed yet, and reads after
// it: a busy stream is trimmed once per TrimInterval, not after every
// write. A read is a plain read, which Redis neither records nor
// replicates.
//
// It writes an event to the sink only once a replica of its master has it,
// when the master has replicas: a failover then loses events the sink does
// not have yet, never one it has (docs/events.md, Delivery).
//
// While Run runs, each master sends it change notices (client tracking in
// broadcast mode): the names of the keys written, a message per event loop
// of the server. A stream is read when a notice names it, and otherwise
// only every WatchedIdle; polling every stream instead would cost a read per
// stream every MaxIdle, thousands a second, and still make an event wait
// for its stream's turn. A master that sends no notices (its connection
// down, or no tracking) has its streams polled as before, every MaxIdle.
type Relay struct {
	rdb  redis.UniversalClient
	sink Sink
	o    Options

	streams  map[string]*relayStream
	replicas map[string]int // master address -> connected replicas, as INFO last said; cleared at discovery and after errors

	watches map[string]*worker.Watch // master address -> its notices; only while Run runs
	ping    time.Duration            // worker.WatchPing; a test makes it long, so that a stop that waits for it shows
	watchWG sync.WaitGroup
	mu      sync.Mutex
	noticed map[string]bool // outbox keys named by notices since the last round
	resync  bool            // a watch (re)subscribed: notices may have been lost
	wake    chan struct{}   // a notice came
	waited  int64           // how long the oldest event of the last write waited for it, ms (0: no write since the last measure)

	relayed, batches, errs, nstreams, backlog, lag atomic.Int64
	rounds                                         atomic.Int64 // for tests
	sinkDown                                       atomic.Bool
}

// relayStream is one followed outbox.
type relayStream struct {
	key      string
	idle     time.Duration // back-off of an idle stream
	nextRead time.Time
	// behind: entries may wait in it beyond the next round (its last read
	// was full or failed, or what it read was not delivered), which
	// discovery measures.
	behind bool
	// from is the id of the last entry this relay delivered from the
	// stream and has not removed yet: reads start after it. "": read from
	// the head.
	from string
	// trim is the XTRIM MINID that removes what this relay delivered from
	// the stream, until sent ("": nothing to remove); untrimmed counts
	// those entries; trimmed is when the last removal was sent.
	trim      string
	untrimmed int64
	trimmed   time.Time
}

// readFromHead makes the stream's next read start at its head, and drops
// what was to be removed: what the sink has is read again and skipped.
func (s *relayStream) readFromHead() {
	s.from, s.trim, s.untrimmed = "", "", 0
}

// fromHeads removes what the sink has, then makes every stream due and read
// from its head: after a failure, or notices lost, a stream may be another
// than the one read (a master restarted empty, a replica promoted), which
// a read after an id of the old one could pass over in part.
func (r *Relay) fromHeads(ctx context.Context) {
	if err := r.removeDelivered(ctx, time.Now(), true); err != nil {
		r.o.Logger.Warn("relay: delivered events not removed, delivered again", "err", err)
	}
	for _, s := range r.streams {
		s.nextRead = time.Time{}
		s.readFromHead()
	}
}

// NewRelay builds a relay from the outboxes of rdb (a cluster client or a
// single server) to sink.
func NewRelay(rdb redis.UniversalClient, sink Sink, opt *Options) *Relay {
	return &Relay{rdb: rdb, sink: sink, o: opt.withDefaults(), streams: map[string]*relayStream{}, replicas: map[string]int{},
		watches: map[string]*worker.Watch{}, ping: worker.WatchPing, noticed: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// Stats reads the relay's counters; safe to call while it runs.
func (r *Relay) Stats() Stats {
	return Stats{Relayed: r.relayed.Load(), Batches: r.batches.Load(),
		Errors: r.errs.Load(), Streams: r.nstreams.Load(), Backlog: r.backlog.Load(), LagMs: r.lag.Load(),
		SinkDown: r.sinkDown.Load()}
}

// Run relays until ctx is done, then returns nil. Failures (Redis down or
// failing over, the sink down) are logged and retried with back-off: events
// wait in Redis meanwhile.
func (r *Relay) Run(ctx context.Context) error {
	wctx, stopWatches := context.WithCancel(ctx)
	defer func() {
		stopWatches()
		r.watchWG.Wait()
		clear(r.watches)
		for _, s := range r.streams {
			s.idle, s.nextRead = 0, time.Time{} // no more notices: back to polling
		}
		if err := r.removeDelivered(ctx, time.Now(), true); err != nil {
			r.o.Logger.Warn("relay: stopping: delivered events not removed, delivered again later", "err", err)
		}
	}()
	r.syncWatches(wctx)
	var lastDiscover time.Time
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		var err error
		r.mu.Lock()
		resync := r.resync
		r.resync = false
		r.mu.Unlock()
		if resync || time.Since(lastDiscover) >= r.o.DiscoverInterval {
			if err = r.discover(ctx, resync); err == nil {
				lastDiscover = time.Now()
			} else if resync {
				r.mu.Lock()
				r.resync = true
				r.mu.Unlock()
			}
		}
		n := 0
		if err == nil {
			n, err = r.Round(ctx)
		}
		switch {
		case ctx.Err() != nil:
		case err != nil:
			r.errs.Add(1)
			backoff = min(max(2*backoff, r.o.PollInterval), 2*time.Second)
			r.o.Logger.Warn("relay: round failed, retrying", "err", err, "in", backoff)
			r.recover(ctx)
			r.syncWatches(wctx) // a failover changes the masters
			worker.Sleep(ctx, backoff)
		case n == 0:
			backoff = 0
			r.idle(ctx, lastDiscover.Add(r.o.DiscoverInterval))
		default:
			backoff = 0
		}
	}
	return nil
}

// idle waits after a round that found nothing: for a notice, or until the
// first stream is due or discovery's turn comes, and PollInterval at least.
// An idle relay whose masters send notices so wakes about once per
// DiscoverInterval, not once per PollInterval.
func (r *Relay) idle(ctx context.Context, discover time.Time) {
	until := discover
	for _, s := range r.streams {
		if s.nextRead.Before(until) {
			until = s.nextRead
		}
	}
	worker.SleepOrWake(ctx, max(r.o.PollInterval, time.Until(until)), r.wake)
}

// recover prepares the next round after a failure: a fresh slot map (a
// failover moves slots, and go-redis does not reload it on connection
// errors), and every stream due at once, read from its head (fromHeads).
func (r *Relay) recover(ctx context.Context) {
	if c, ok := r.rdb.(*redis.ClusterClient); ok {
		c.ReloadState(ctx)
	}
	clear(r.replicas)
	r.fromHeads(ctx)
}

// Round does one pass: reads what the due streams have, writes it to the
// sink, then removes from the streams what the sink has (see
// TrimInterval). It returns the number of events written to the sink. Run
// calls it in a loop; tests call it directly.
//
// The streams are read per master, one pipeline each, the masters at once.
// A master's pipeline ends with WAIT 1 when it has a replica: WAIT on the
// same connection returns once a replica has everything the master had when
// it answered the reads, including the entries read. (Redis up to 7.0 sets
// a connection's WAIT offset after every command; later versions only after
// one that replicated something, which a read is not: the pipeline writes
// a key of the relay's own before the WAIT. See docs/events.md.) Entries of
// a master no replica confirmed in ReplicaTimeout are not delivered: they
// stay in their streams, read again next round.
func (r *Relay) Round(ctx context.Context) (int, error) {
	r.rounds.Add(1)
	r.takeNotices()
	now := time.Now()
	due := r.dueStreams(now)
	if len(due) == 0 {
		return 0, r.removeDelivered(ctx, now, true)
	}
	count := int64(max(16, min(256, r.o.MaxBatch/max(1, len(due)))))
	groups, firstErr := r.groupByMaster(ctx, due)
	r.readGroups(ctx, groups, count)
	var batch []relayEntry
	for _, g := range groups {
		got, err := r.collect(g, count, now)
		if firstErr == nil {
			firstErr = err
		}
		if err := r.holdBackUnreplicated(g, got); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		batch = append(batch, got...)
	}
	if len(batch) == 0 {
		if firstErr == nil {
			firstErr = r.removeDelivered(ctx, now, true) // nothing new: remove everything delivered
		}
		return 0, firstErr
	}
	n, err := r.deliver(ctx, batch)
	if err == nil {
		err = r.removeDelivered(ctx, time.Now(), false)
	}
	if err != nil {
		return n, err
	}
	return n, firstErr
}
