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
	if testCluster == nil {
		b.Skip("no cluster (-short)")
	}
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	eng := engine.New(rdb, nil)
	ctx := context.Background()
	const holders = 256
	var ins []instructions.Instruction
	run := newID("b")
	for i := range holders {
		ins = append(ins, instructions.New("open", "bench-"+run+"-"+strconv.Itoa(i)).Open().Credit("CNY", "1000000.00"))
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
			k := n.Add(1)
			body, _ := instructions.Encode(instructions.New("d-"+run+"-"+strconv.FormatInt(k, 10),
				"bench-"+run+"-"+strconv.FormatInt(k%holders, 10)).Debit("CNY", "0.01"))
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/instructions", bytes.NewReader(body))
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
