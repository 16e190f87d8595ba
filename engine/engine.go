package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
)

// DefaultIdempotencyTTL is how long instruction ids are remembered by default.
const DefaultIdempotencyTTL = libcall.DefaultTTL

// DefaultReplicaAckTimeout is how long an answer waits for replicas by
// default when Options.MinReplicaAcks is set.
const DefaultReplicaAckTimeout = time.Second

// MinRedisVersion is the oldest server the library accepts: 7.0.12 fixes the
// cjson and cmsgpack overflow CVE, and 7.0 has Redis Functions, refused
// before they run when they could not complete.
const MinRedisVersion = "7.0.12"

// Options configure an Engine. A nil *Options or a zero field means the default.
type Options struct {
	// Assets is the asset registry. Default: instructions.DefaultAssets.
	Assets *instructions.Registry
	// IdempotencyTTL is how long an instruction id is remembered. Redis
	// keeps records in whole milliseconds: a TTL under 1ms is taken as 1ms
	// (New has no error to return, and 0 would make Redis refuse the
	// record's write). Default: 24h.
	IdempotencyTTL time.Duration
	// MinReplicaAcks, when positive, makes every answer wait until that many
	// replicas of the holder's master have the instruction's writes: the
	// script and a WAIT go in one pipeline on the master's own connection
	// (WAIT counts the writes of its connection). Replication is
	// asynchronous, so without it a failover may lose instructions already
	// answered; with it, an answer survives the loss of the master as long as
	// one of the replicas that acknowledged it is promoted.
	//
	// If fewer replicas acknowledge within ReplicaAckTimeout, the instruction
	// DID apply on the master but is not known to be durable: it is answered
	// UNAVAILABLE, like any outcome the caller cannot rely on. Retrying with
	// the same id is safe: it replays the recorded outcome (after waiting for
	// replicas again) or, if the failover lost it, applies it anew. A
	// replayed answer is confirmed the same way. It costs a replication round
	// trip per pipeline; a master without enough replicas answers nothing but
	// UNAVAILABLE. Default 0: answer as soon as the master has applied.
	MinReplicaAcks int
	// ReplicaAckTimeout bounds the wait for MinReplicaAcks; keep it below the
	// client's ReadTimeout. Default: 1s.
	ReplicaAckTimeout time.Duration
	// TransferTimeout is how long a transfer may stay undecided before the
	// recovery worker aborts it, and how long a decided one may wait for its
	// driver to finish its parts before the worker does. Default: 30s.
	TransferTimeout time.Duration
	// Logger receives what a caller cannot be told: a transfer step left
	// for the recovery worker. Default: slog.Default().
	Logger *slog.Logger
}

// Engine applies instructions. It is safe for concurrent use.
type Engine struct {
	rdb     redis.UniversalClient
	assets  *instructions.Registry
	idemTTL string // milliseconds, as the script takes it
	ttl     time.Duration
	log     *slog.Logger

	xferTimeout time.Duration

	minAcks    int           // Options.MinReplicaAcks
	ackTimeout time.Duration // Options.ReplicaAckTimeout
	acks       ackHealth

	group  group         // shared pipelines of Apply and transfer steps (group.go)
	books  transferBooks // one-payer transfers' records to mark done (transfer_claim.go)
	lanes  laneCache     // hot holders' lanes (hot.go)
	payees seenHolders   // holders payments' reads found (transfer_pay.go)

	sweepOnce sync.Once
	sweepEng  *Engine // the hot sweep's transfers run on it (hot_sweep.go)
}

// New builds an Engine on a go-redis client: a *redis.ClusterClient for a
// cluster, a *redis.Client for a single server or Sentinel.
func New(rdb redis.UniversalClient, opt *Options) *Engine {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Assets == nil {
		o.Assets = instructions.MustParseAssets(instructions.DefaultAssets)
	}
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = DefaultIdempotencyTTL
	}
	o.IdempotencyTTL = max(o.IdempotencyTTL, time.Millisecond)
	if o.ReplicaAckTimeout <= 0 {
		o.ReplicaAckTimeout = DefaultReplicaAckTimeout
	}
	if o.TransferTimeout <= 0 {
		o.TransferTimeout = DefaultTransferTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Engine{rdb: rdb, assets: o.Assets, idemTTL: strconv.FormatInt(o.IdempotencyTTL.Milliseconds(), 10),
		ttl: o.IdempotencyTTL, log: o.Logger, xferTimeout: o.TransferTimeout,
		minAcks: max(o.MinReplicaAcks, 0), ackTimeout: o.ReplicaAckTimeout, acks: ackHealth{short: map[string]int{}}}
}

// Assets gives the engine's asset registry.
func (e *Engine) Assets() *instructions.Registry { return e.assets }

// Load checks that every master runs Redis 7.0.12 or newer and loads the
// library on every master (FUNCTION LOAD REPLACE); replicas get it from
// their master. Apply works without it (a call answered "Function not found"
// loads the library on that master and is sent again), but a daemon should
// call it at start and report readiness by it. A plain client (not a
// cluster client) of a Redis Cluster node is refused: it would reach only
// that node's slots.
func (e *Engine) Load(ctx context.Context) error {
	_, plain := e.rdb.(*redis.Client)
	return e.forEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return fmt.Errorf("load library: %w", err)
		}
		if v := cluster.InfoField(info, "redis_version"); !versionAtLeast(v, MinRedisVersion) {
			return fmt.Errorf("load library: %s runs Redis %q, atomledger needs %s or newer", c.Options().Addr, v, MinRedisVersion)
		}
		if !plain {
			return loadLibrary(ctx, c)
		}
		// A plain client reaches one server: refuse it on a cluster node.
		if info, err = c.Info(ctx, "cluster").Result(); err != nil {
			return fmt.Errorf("load library: %w", err)
		}
		if cluster.InfoField(info, "cluster_enabled") == "1" {
			return fmt.Errorf("load library: %s is a node of a Redis Cluster, reached by a client of one server: "+
				"the holders of the other nodes would be answered MOVED; use a cluster client", c.Options().Addr)
		}
		return loadLibrary(ctx, c)
	})
}

// forEachMaster runs fn on every master of a cluster, or on the one server.
func (e *Engine) forEachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	default:
		return fmt.Errorf("engine: unsupported client %T", e.rdb)
	}
}

// Ping asks every master of a cluster, or the one server, for PONG. A
// cluster with a master down serves none of that master's holders, and with
// the default cluster-require-full-coverage none at all, until a replica
// takes over.
func (e *Engine) Ping(ctx context.Context) error {
	return e.forEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() })
}

// versionAtLeast compares dotted versions numerically.
func versionAtLeast(v, min string) bool {
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := range b {
		if i >= len(a) {
			return false
		}
		x, err1 := strconv.Atoi(a[i])
		y, err2 := strconv.Atoi(b[i])
		if err1 != nil || err2 != nil {
			return false
		}
		if x != y {
			return x > y
		}
	}
	return true
}
