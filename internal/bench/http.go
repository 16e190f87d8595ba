package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/atomledger/atomledger/instructions"
)

// The http part starts the real daemon (engined serve, a process of its
// own, on a free port, with the run's Redis) and loads it with Workers
// keep-alive clients posting the load parts' debit, as fast as it answers:
// that throughput against the library's (concurrent.engine_per_sec, the same
// instructions from as many goroutines) is ratio_to_library. Then it offers
// half that throughput, open loop, and measures each request's latency from
// the moment it was due, so that a stall counts for every request it
// delays.

func runHTTP(ctx context.Context, e *env, l *loadSet, lib Compare) (HTTP, error) {
	const part = "http"
	out := HTTP{Clients: e.s.Workers}
	if len(e.opt.Daemon) == 0 {
		return out, skipf("no daemon command: run the bench through engined bench")
	}
	d, err := startDaemon(ctx, e)
	if err != nil {
		return out, err
	}
	defer d.stop()
	e.step(part, 1, 3, "full load")

	tr := &http.Transport{MaxIdleConns: 2 * e.s.Workers, MaxIdleConnsPerHost: 2 * e.s.Workers, MaxConnsPerHost: e.s.Workers,
		IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 15 * time.Second}
	post := func(in instructions.Instruction) error {
		body, err := instructions.Encode(in)
		if err != nil {
			return err
		}
		resp, err := client.Post(d.url+"/v1/instructions", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
		}
		return nil
	}

	// Closed loop: every client posts its next debit as soon as it has an answer.
	var ok atomic.Int64
	var ec errCount
	took := hammer(e.s.Workers, e.s.HTTPDuration, func(int) {
		for _, in := range l.debits(1) {
			if err := post(in); err != nil {
				ec.add(err)
				return
			}
			ok.Add(1)
		}
	})
	out.PerSec = round(float64(ok.Load()) / took.Seconds())
	errs, first := ec.result()
	out.Errors = errs
	if errs > 0 && ok.Load() == 0 {
		return out, fmt.Errorf("every request failed, first: %w", first)
	}
	out.RatioToLibrary = round(ratio(out.PerSec, lib.EnginePerSec))
	e.step(part, 2, 3, "half load")

	// Open loop at half the rate: request k is due at start + k/rate.
	rate := float64(ok.Load()) / took.Seconds() / 2
	out.HalfLoadRate = round(rate)
	n := int(rate * e.s.HTTPDuration.Seconds())
	ins := l.debits(n)
	svc := make([]float64, n) // from when it was sent
	lat, took := openLoop(n, rate, e.s.Workers, func(k int) {
		sent := time.Now()
		if err := post(ins[k]); err != nil {
			ec.add(err)
		}
		svc[k] = float64(time.Since(sent)) / float64(time.Millisecond)
	})
	out.HalfLoadAchvd = round(float64(n) / took.Seconds())
	slices.Sort(lat)
	out.P50Ms = round(percentile(lat, 50))
	out.P99Ms = round(percentile(lat, 99))
	slices.Sort(svc)
	out.P99ServiceMs = round(percentile(svc, 99))
	out.Errors, _ = ec.result()
	e.step(part, 3, 3, "")
	return out, nil
}

// openLoop offers n operations at rate, open loop: operation k is due at
// start + k/rate and its latency (ms, lat[k]) counts from then, so that a
// stall counts for every operation it delays. workers run them, each as
// soon as it is free; took is from the start to the last one's end.
func openLoop(n int, rate float64, workers int, op func(k int)) (lat []float64, took time.Duration) {
	due := make(chan time.Time, n)
	lat = make([]float64, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for t := range due {
				k := int(next.Add(1) - 1)
				op(k)
				lat[k] = float64(time.Since(t)) / float64(time.Millisecond)
			}
		})
	}
	interval := time.Duration(float64(time.Second) / rate)
	for k := range n {
		at := start.Add(time.Duration(k) * interval)
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		due <- at
	}
	close(due)
	wg.Wait()
	return lat, time.Since(start)
}

// daemon is a running engined serve.
type daemon struct {
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
	done chan struct{}
}

// startDaemon starts engined serve --dev on e's Redis, with extra flags.
func startDaemon(ctx context.Context, e *env, extra ...string) (*daemon, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	args := append(slices.Clone(e.opt.Daemon[1:]), "serve", "--dev", "--listen", addr,
		"--redis", strings.Join(e.addrs, ","), "--log-level", "warn")
	args = append(args, extra...)
	if e.cluster && len(e.addrs) == 1 {
		args = append(args, "--redis-cluster")
	}
	cmd := exec.Command(e.opt.Daemon[0], args...)
	// The daemon gets only the configuration given here: an ENGINED_PG_DSN
	// of the shell, say, would make it relay the bench's events into that
	// ledger.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ENGINED_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if e.opt.Username != "" {
		cmd.Env = append(cmd.Env, "ENGINED_REDIS_USERNAME="+e.opt.Username)
	}
	if e.opt.Password != "" {
		cmd.Env = append(cmd.Env, "ENGINED_REDIS_PASSWORD="+e.opt.Password)
	}
	if e.opt.TLS != nil {
		cmd.Env = append(cmd.Env, "ENGINED_REDIS_TLS=true")
	}
	d := &daemon{cmd: cmd, url: "http://" + addr, logs: &bytes.Buffer{}, done: make(chan struct{})}
	w := &limited{b: d.logs, n: 64 << 10}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	go func() { _ = cmd.Wait(); close(d.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		select {
		case <-d.done:
			return nil, fmt.Errorf("daemon exited: %s", d.logs)
		case <-ctx.Done():
			d.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("daemon not ready after 30s: %s", d.logs)
		}
	}
}

// metric reads one sample without labels from the daemon's /metrics.
func (d *daemon) metric(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return metricValue(string(b), name)
}

// metricValue finds the sample "name value" in a Prometheus text exposition.
func metricValue(text, name string) (float64, error) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no metric %s", name)
}

// stop ends the daemon as an operator would (SIGTERM), and kills it if it
// is still there 10 seconds later.
func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// limited keeps the first n bytes written to it.
type limited struct {
	mu sync.Mutex
	b  *bytes.Buffer
	n  int
}

func (w *limited) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
