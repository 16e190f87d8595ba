package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// BenchmarkServer_PostDebit runs POST /v1/instructions (a 1-op debit) through
// the daemon's handler on a local listener against the test cluster, from
// parallel keep-alive clients: with -cpuprofile, what one request costs the
// daemon beside Redis. cpu-ns/op is the CPU time of the whole process
// (clients and daemon, not Redis) per request: on shared cores, a steadier
// figure than the wall time of ns/op.
//
//	go test -run '^$' -bench Server_PostDebit -cpuprofile cpu.out ./cmd/engined/
func BenchmarkServer_PostDebit(b *testing.B) {
	benchPost(b, "/v1/instructions", func(run string, k int64, holder func(int64) string) []byte {
		body, _ := instructions.Encode(instructions.New("d-"+run+"-"+strconv.FormatInt(k, 10), holder(k)).Debit("CNY", "0.01"))
		return body
	})
}

// BenchmarkServer_PostTransfer runs POST /v1/transfers, P2P payments (a
// one-payer transfer: debit the payer, credit the payee), as
// BenchmarkServer_PostDebit runs debits: what a payment costs the daemon
// beside Redis.
//
//	go test -run '^$' -bench Server_PostTransfer -cpuprofile cpu.out ./cmd/engined/
func BenchmarkServer_PostTransfer(b *testing.B) {
	benchPost(b, "/v1/transfers", func(run string, k int64, holder func(int64) string) []byte {
		// Holder k pays holder k+1: every holder pays as much as it
		// receives, and consecutive payments rarely share a holder.
		return []byte(payment("p-"+run+"-"+strconv.FormatInt(k, 10), holder(k), holder(k+1), "0.01"))
	})
}

// benchPost opens 256 holders with plenty of CNY, then posts body(run, k,
// holder) to path for the k-th request from parallel keep-alive clients
// through the daemon's handler on a local listener, and reports cpu-ns/op.
func benchPost(b *testing.B, path string, body func(run string, k int64, holder func(int64) string) []byte) {
	if testCluster == nil {
		b.Skip("no cluster (-short)")
	}
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	eng := engine.New(rdb, nil)
	defer eng.Flush()
	ctx := context.Background()
	const holders = 256
	run := newID("b")
	holder := func(k int64) string { return "bench-" + run + "-" + strconv.FormatInt(k%holders, 10) }
	var ins []instructions.Instruction
	for i := range int64(holders) {
		ins = append(ins, instructions.New("open", holder(i)).Open().Credit("CNY", "1000000.00"))
	}
	for _, o := range eng.ApplyBatch(ctx, ins) {
		if o.Err != nil {
			b.Fatal(o.Err)
		}
	}
	s := newServer(eng, rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	srv := httptest.NewServer(s.handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body(run, n.Add(1), holder)))
			req.Header.Set("Authorization", "Bearer t")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time, user and system, that the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
