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
	"testing"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// BenchmarkServer_PostTransfer runs POST /v1/transfers, P2P payments (a
// one-payer transfer: debit the payer, credit the payee), through the
// daemon's handler as BenchmarkServer_PostDebit runs debits: what a payment
// costs the daemon beside Redis (cpu-ns/op, the process's CPU per request).
//
//	go test -run '^$' -bench Server_PostTransfer -cpuprofile cpu.out ./cmd/engined/
func BenchmarkServer_PostTransfer(b *testing.B) {
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
			// Holder k pays holder k+1: every holder pays as much as it
			// receives, and consecutive payments rarely share a holder.
			from := "bench-" + run + "-" + strconv.FormatInt(k%holders, 10)
			to := "bench-" + run + "-" + strconv.FormatInt((k+1)%holders, 10)
			body := payment("p-"+run+"-"+strconv.FormatInt(k, 10), from, to, "0.01")
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/transfers", bytes.NewReader([]byte(body)))
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
