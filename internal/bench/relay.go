package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/pgtest"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// The relay part runs outbox.Relay into the PostgreSQL ledger while debits
// are applied at a steady rate, and measures each event's lag: the time
// from the script run that wrote it (the event's ts, the server's clock) to
// the commit of the sink batch that holds it. It looks for the highest rate
// at which the relay keeps up (everything offered is committed) with a lag
// p99 under the limit, with short probes doubling the rate and then
// bisecting, and holds the best one for the sustained run.

// lagSink wraps the ledger and records each event's lag at commit.
type lagSink struct {
	led *ledger.Ledger

	mu   sync.Mutex
	lags []float64 // ms, since the last window
	n    atomic.Int64
}

func (s *lagSink) Write(ctx context.Context, batch []stored.Entry) error {
	if err := s.led.Write(ctx, batch); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	s.mu.Lock()
	for _, e := range batch {
		if e.Err == nil {
			s.lags = append(s.lags, float64(now-e.Event.TS))
		}
	}
	s.mu.Unlock()
	s.n.Add(int64(len(batch)))
	return nil
}

// window returns the lags recorded since the last call, sorted.
func (s *lagSink) window() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.lags
	s.lags = nil
	slices.Sort(w)
	return w
}

type relayRun struct {
	e       *env
	sink    *lagSink
	holders []string
	ids     atomic.Int64
	applied atomic.Int64 // instructions applied, so events written
	lastP50 float64
}

func runRelay(ctx context.Context, e *env) (Relay, error) {
	const part = "relay"
	out := Relay{Holders: e.s.RelayHolders}
	dsn := e.opt.PGDSN
	if dsn == "" {
		e.step(part, 0, 1, "starting PostgreSQL")
		srv, err := pgtest.Start(ctx)
		if err != nil {
			return out, skipf("no PostgreSQL (give --pg DSN): %v", err)
		}
		defer srv.Close()
		dsn = srv.DSN
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	led, err := ledger.Open(ctx, dsn, &ledger.Options{Logger: quiet})
	if err != nil {
		return out, err
	}
	defer led.Close()

	r := &relayRun{e: e, sink: &lagSink{led: led}, holders: e.holderIDs("relay", e.s.RelayHolders)}
	ins := make([]instructions.Instruction, len(r.holders))
	for i, h := range r.holders {
		ins[i] = instructions.New("open", h).Open().Credit("CNY", richCNY)
	}
	if err := e.applyAll(ctx, ins); err != nil {
		return out, err
	}
	r.applied.Add(int64(len(ins)))

	rctx, cancel := context.WithCancel(ctx)
	relay := outbox.NewRelay(e.rdb, r.sink, &outbox.Options{Logger: quiet})
	var wg sync.WaitGroup
	wg.Go(func() { _ = relay.Run(rctx) })
	defer func() { cancel(); wg.Wait() }()

	// Warm up: the relay finds the streams and the ledger gets every holder.
	e.step(part, 0, 1, "warming up")
	if err := r.drain(ctx, 60*time.Second); err != nil {
		return out, err
	}
	r.sink.window()

	// Search: double until a probe fails, then bisect once.
	probe := func(rate float64, d time.Duration) (Probe, error) {
		p, err := r.probe(ctx, rate, d)
		if err == nil {
			out.Probes = append(out.Probes, p)
			e.step(part, len(out.Probes), len(out.Probes)+1, fmt.Sprintf("%.0f/s: p99 %.0f ms", p.Offered, p.LagP99Ms))
		}
		return p, err
	}
	good, bad := 0.0, 0.0
	for rate := 1000.0; rate <= 256000; rate *= 2 {
		p, err := probe(rate, e.s.RelayProbe)
		if err != nil {
			return out, err
		}
		if !p.Ok {
			bad = rate
			break
		}
		good = rate
	}
	if good == 0 {
		for rate := 500.0; rate >= 50; rate /= 2 {
			p, err := probe(rate, e.s.RelayProbe)
			if err != nil {
				return out, err
			}
			if p.Ok {
				good = rate
				break
			}
			bad = rate
		}
	}
	if good > 0 && bad > 0 {
		for range 1 {
			mid := math.Sqrt(good * bad)
			p, err := probe(mid, e.s.RelayProbe)
			if err != nil {
				return out, err
			}
			if p.Ok {
				good = mid
			} else {
				bad = mid
			}
		}
	}
	if good == 0 {
		return out, nil
	}

	// The sustained run: a long run meets hiccups a short probe may miss
	// (checkpoints, GC), so it starts a little below the best probe and
	// steps down while it fails.
	rate := 0.7 * good
	for try := range 3 {
		p, err := r.probe(ctx, rate, e.s.RelayDur)
		if err != nil {
			return out, err
		}
		out.Offered, out.Seconds = round(p.Offered), round(p.Seconds)
		out.SustainedPerSec, out.LagP99Ms, out.LagP50Ms = p.Relayed, p.LagP99Ms, r.lastP50
		out.Sustain = append(out.Sustain, p)
		if p.Ok {
			break
		}
		if try == 2 {
			out.SustainedPerSec = 0
		}
		rate *= 0.6
	}
	e.step(part, 1, 1, "")
	return out, nil
}

// probe applies debits at rate for d, waits until the relay has committed
// them all, and tells how it went.
func (r *relayRun) probe(ctx context.Context, rate float64, d time.Duration) (Probe, error) {
	e := r.e
	before := r.sink.n.Load()
	start := time.Now()
	var ec errCount
	var inflight sync.WaitGroup
	sem := make(chan struct{}, 4)
	sent := 0
	tick := time.NewTicker(5 * time.Millisecond)
	for now := range tick.C {
		el := now.Sub(start)
		if el >= d {
			break
		}
		want := int(rate*el.Seconds()) - sent
		if want <= 0 {
			continue
		}
		ins := make([]instructions.Instruction, want)
		for i := range ins {
			k := r.ids.Add(1)
			ins[i] = debit("relay-"+strconv.FormatInt(k, 10), r.holders[int(k)%len(r.holders)])
		}
		sent += want
		sem <- struct{}{} // a producer that cannot keep up shows as a lower offered rate
		inflight.Go(func() {
			defer func() { <-sem }()
			for lo := 0; lo < len(ins); lo += 100 {
				for _, o := range e.eng.ApplyBatch(ctx, ins[lo:min(lo+100, len(ins))]) {
					if o.Err != nil {
						ec.add(o.Err)
					} else {
						r.applied.Add(1)
					}
				}
			}
		})
	}
	tick.Stop()
	inflight.Wait()
	offeredFor := time.Since(start)
	if errs, err := ec.result(); errs > 0 {
		return Probe{}, fmt.Errorf("apply at %.0f/s: %d failed, first: %w", rate, errs, err)
	}
	// Let the relay finish this probe's events: their lags count, and a
	// relay that fell behind shows as the lag of the last ones.
	if err := r.drain(ctx, 30*time.Second); err != nil {
		return Probe{}, err
	}
	committed := r.sink.n.Load() - before
	lags := r.sink.window()
	p := Probe{Offered: round(float64(sent) / offeredFor.Seconds()), Relayed: round(float64(committed) / time.Since(start).Seconds()),
		LagP99Ms: round(percentile(lags, 99)), Seconds: round(offeredFor.Seconds())}
	r.lastP50 = round(percentile(lags, 50))
	p.Ok = p.LagP99Ms < float64(e.s.LagLimit/time.Millisecond) && p.Offered >= 0.9*rate
	return p, nil
}

// drain waits until every event written so far is committed.
func (r *relayRun) drain(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for r.sink.n.Load() < r.applied.Load() {
		if time.Now().After(deadline) {
			return fmt.Errorf("relay: %d of %d events committed after %s", r.sink.n.Load(), r.applied.Load(), limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
