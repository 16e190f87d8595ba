package engine

import (
	"context"
	"time"
)

// Discover follows every outbox stream that exists, as Run does first, so
// that a test can then call Round alone.
func (r *Relay) Discover(ctx context.Context) error { return r.discover(ctx, true) }

// SetWatchPing sets how long r's watches wait for a notice before they ping
// their master; call it before Run.
func SetWatchPing(r *Relay, d time.Duration) { r.ping = d }
