package worker

import (
	"context"
	"time"
)

// SlotsPerPipeline is how many per-slot commands a worker that reads every
// slot (the relay's discovery, a sweeper's pass) sends in one pipeline.
const SlotsPerPipeline = 2048

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
