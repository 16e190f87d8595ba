package engine

import "context"

// Discover follows every outbox stream that exists, as Run does first, so
// that a test can then call Round alone.
func (r *Relay) Discover(ctx context.Context) error { return r.discover(ctx, true) }
