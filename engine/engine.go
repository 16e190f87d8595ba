package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// DefaultIdempotencyTTL is how long instruction ids are remembered by default.
const DefaultIdempotencyTTL = 24 * time.Hour

// MinRedisVersion is the oldest server the scripts accept: 7.0.12 fixes the
// cjson and cmsgpack overflow CVE, and 7.0 refuses #!lua scripts before they
// run when they could not complete.
const MinRedisVersion = "7.0.12"

// Options configure an Engine. A nil *Options or a zero field means the default.
type Options struct {
	// Assets is the asset registry. Default: instructions.DefaultAssets.
	Assets *instructions.Registry
	// IdempotencyTTL is how long an instruction id is remembered. Default: 24h.
	IdempotencyTTL time.Duration
}

// Engine applies instructions. It is safe for concurrent use.
type Engine struct {
	rdb     redis.UniversalClient
	assets  *instructions.Registry
	idemTTL string // milliseconds, as the script takes it
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
	return &Engine{rdb: rdb, assets: o.Assets, idemTTL: strconv.FormatInt(o.IdempotencyTTL.Milliseconds(), 10)}
}

// Assets gives the engine's asset registry.
func (e *Engine) Assets() *instructions.Registry { return e.assets }

// Load checks that every master runs Redis 7.0.12 or newer and loads the
// scripts on every node. Apply works without it (it falls back to sending the
// script), but a daemon should call it at start and report readiness by it.
func (e *Engine) Load(ctx context.Context) error {
	return e.forEachNode(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return fmt.Errorf("load scripts: %w", err)
		}
		if v := infoField(info, "redis_version"); !versionAtLeast(v, MinRedisVersion) {
			return fmt.Errorf("load scripts: %s runs Redis %q, atomledger needs %s or newer", c.Options().Addr, v, MinRedisVersion)
		}
		for _, s := range lua.All {
			if err := c.ScriptLoad(ctx, s.Source).Err(); err != nil {
				return fmt.Errorf("load scripts: %s: %w", s.Name, err)
			}
		}
		return nil
	})
}

// forEachNode runs fn on every node of a cluster, or on the one server.
func (e *Engine) forEachNode(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachShard(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	default:
		return fmt.Errorf("load scripts: unsupported client %T", e.rdb)
	}
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
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
