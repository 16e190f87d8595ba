package worker

import (
	"context"
	"time"
)

// SlotsPerPipeline is how many per-slot commands a worker that reads every
// slot (the relay's discovery, a sweeper's pass) sends in one pipeline.
const SlotsPerPipeline = 2048

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) { SleepOrWake(ctx, d, nil) }

// SleepOrWake waits d, or until ctx is done or wake receives (a nil wake
// never does).
func SleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}
