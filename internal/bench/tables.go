package bench

import (
	"fmt"
	"io"
	"strconv"

	"github.com/jedib0t/go-pretty/v6/table"
)

// WriteTables writes r as engined bench prints it: the summary, the
// checkout's breakdown, the system part's costs, the cost of each key and
// the targets.
func WriteTables(w io.Writer, r *Report) {
	f := func(v float64) string { return fmt.Sprintf("%g", v) }
	skip := func(reason string) bool { return reason != "" }

	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetTitle(fmt.Sprintf("atomledger bench: %d CPUs, Redis %s, %s", r.Machine.CPUs, r.Machine.RedisVersion, r.Machine.Topology))
	t.AppendHeader(table.Row{"part", "measure", "atomledger", "baseline", "ratio"})
	sc := r.ScriptCost
	if skip(sc.Skipped) {
		t.AppendRow(table.Row{"script_cost", "skipped: " + sc.Skipped})
	} else {
		t.AppendRow(table.Row{"script_cost", "server usec per call", "checkout " + f(sc.CheckoutUsec), "seed deduct " + f(sc.SeedDeductUsec), f(sc.Ratio)})
		t.AppendRow(table.Row{"script_cost", "server usec per call", "1-op debit " + f(sc.DebitUsec), "seed deduct " + f(sc.SeedDeductUsec), f(sc.DebitRatio)})
		t.AppendRow(table.Row{"script_cost", "server usec per call", "1-op debit " + f(sc.DebitUsec), "floor debit " + f(sc.FloorDebitUsec), f(sc.DebitOverFloor)})
		t.AppendRow(table.Row{"script_cost", "server usec per call", "checkout " + f(sc.CheckoutUsec), "floor checkout " + f(sc.FloorCheckoutUsec), f(sc.CheckoutOverFloor)})
		t.AppendRow(table.Row{"script_cost", "server usec per call", "checkout as JSON " + f(sc.JSONUsec), "seed deduct " + f(sc.SeedDeductUsec), f(sc.JSONRatio)})
	}
	for _, cp := range []struct {
		name, measure string
		c             Compare
	}{
		{"pipeline", fmt.Sprintf("instructions/s, ApplyBatch of %d", r.Pipeline.BatchSize), r.Pipeline},
		{"concurrent", fmt.Sprintf("instructions/s, %d goroutines", r.Concurrent.Workers), r.Concurrent},
	} {
		if skip(cp.c.Skipped) {
			t.AppendRow(table.Row{cp.name, "skipped: " + cp.c.Skipped})
			continue
		}
		t.AppendRow(table.Row{cp.name, cp.measure, "engine " + f(cp.c.EnginePerSec), "raw FCALL " + f(cp.c.RawPerSec), f(cp.c.Ratio)})
	}
	h := r.HTTP
	if skip(h.Skipped) {
		t.AppendRow(table.Row{"http", "skipped: " + h.Skipped})
	} else {
		t.AppendRow(table.Row{"http", fmt.Sprintf("requests/s, %d keep-alive clients", h.Clients), "daemon " + f(h.PerSec), "library " + f(r.Concurrent.EnginePerSec), f(h.RatioToLibrary)})
		t.AppendRow(table.Row{"http", fmt.Sprintf("latency at %g/s (half), p50 / p99 ms", h.HalfLoadRate), f(h.P50Ms) + " / " + f(h.P99Ms),
			fmt.Sprintf("p99 from send %g", h.P99ServiceMs), ""})
	}
	c := r.Contention
	if skip(c.Skipped) {
		t.AppendRow(table.Row{"contention", "skipped: " + c.Skipped})
	} else {
		scheme := func(name string, s Scheme) string {
			out := fmt.Sprintf("%s %g/s, lost %d", name, s.PerSec, s.Lost)
			if s.Retries != nil {
				out += fmt.Sprintf(", retries %d", *s.Retries)
			}
			if s.Timeouts != nil {
				out += fmt.Sprintf(", timeouts %d", *s.Timeouts)
			}
			return out
		}
		t.AppendRow(table.Row{"contention", fmt.Sprintf("one account, %d workers", c.Workers), scheme("lua", c.Lua), scheme("watch", c.Watch), f(c.LuaVsWatch)})
		t.AppendRow(table.Row{"contention", "", "", scheme("lock", c.Lock), ""})
		t.AppendRow(table.Row{"contention", "", "", scheme("get/set", c.GetSet), ""})
	}
	tr := r.Transfer
	if skip(tr.Skipped) {
		t.AppendRow(table.Row{"transfer", "skipped: " + tr.Skipped})
	} else {
		t.AppendRow(table.Row{"transfer", fmt.Sprintf("two-part trades/s, %d workers", tr.Workers), "transfer " + f(tr.PerSec), "single Apply " + f(tr.SinglePerSec), f(tr.Ratio)})
		t.AppendRow(table.Row{"transfer", fmt.Sprintf("P2P payments/s, %d workers", tr.Workers), "payment " + f(tr.PaymentPerSec), "single Apply " + f(tr.SinglePerSec), f(tr.PaymentRatio)})
		t.AppendRow(table.Row{"transfer", "transfer latency p50 / p99 ms", f(tr.P50Ms) + " / " + f(tr.P99Ms),
			fmt.Sprintf("aborted %d, %d of %d pairs across masters", tr.Aborted, tr.CrossMaster, tr.Pairs), ""})
		t.AppendRow(table.Row{"transfer", "server usec in scripts, all masters", "transfer " + f(tr.ServerUsec), "single Apply " + f(tr.SingleServerUsec), ""})
	}
	m := r.Memory
	if skip(m.Skipped) {
		t.AppendRow(table.Row{"memory", "skipped: " + m.Skipped})
	} else {
		t.AppendRow(table.Row{"memory", fmt.Sprintf("bytes per holder (%d holders)", m.Holders), f(m.BytesPerHolder), fmt.Sprintf("with transient %g", m.WithTransient), ""})
	}
	rl := r.Relay
	if skip(rl.Skipped) {
		t.AppendRow(table.Row{"relay", "skipped: " + rl.Skipped})
	} else {
		t.AppendRow(table.Row{"relay", fmt.Sprintf("events/s held %gs, lag p50 / p99 ms", rl.Seconds), f(rl.SustainedPerSec), f(rl.LagP50Ms) + " / " + f(rl.LagP99Ms), ""})
	}
	if skip(r.System.Skipped) {
		t.AppendRow(table.Row{"system", "skipped: " + r.System.Skipped})
	} else {
		for _, p := range r.System.Phases {
			t.AppendRow(table.Row{"system", fmt.Sprintf("%s/s over HTTP, %d clients, p50 / p99 %g / %g ms", p.Name, r.System.Clients, p.P50Ms, p.P99Ms),
				f(p.PerSec), "floor " + f(floorRate(r.System)), ratioOrBlank(r.System.Ratios.ToFloor, p.Name)})
		}
	}
	hotRows(t, r.Hot)
	t.Render()

	if len(sc.Breakdown) > 0 {
		b := table.NewWriter()
		b.SetOutputMirror(w)
		b.SetTitle("checkout breakdown: each stage is the apply function cut before the next part")
		b.AppendHeader(table.Row{"part added", "usec added", "usec so far"})
		for _, s := range sc.Breakdown {
			b.AppendRow(table.Row{s.Stage, f(s.StageUsec), f(s.CumulativeUsec)})
		}
		b.Render()
	}
	if len(sc.Commands) > 0 {
		b := table.NewWriter()
		b.SetOutputMirror(w)
		b.SetTitle("redis.call per checkout")
		b.SetCaption("%g of the checkout's %g usec are spent in these commands (commandstats); one redis.call costs the script %g usec in all.",
			sc.InCommandsUsec, sc.CheckoutUsec, sc.RedisCallUsec)
		b.AppendHeader(table.Row{"command", "calls", "usec"})
		for _, cc := range sc.Commands {
			b.AppendRow(table.Row{cc.Command, f(cc.Calls), f(cc.Usec)})
		}
		b.Render()
	}
	writeSystemTables(w, r.System)
	if len(m.Keys) > 0 {
		k := table.NewWriter()
		k.SetOutputMirror(w)
		k.SetTitle("MEMORY USAGE per key of a typical holder")
		k.AppendHeader(table.Row{"key", "bytes"})
		for _, kc := range m.Keys {
			k.AppendRow(table.Row{kc.Key, f(kc.Bytes)})
		}
		k.Render()
	}
	tt := table.NewWriter()
	tt.SetOutputMirror(w)
	tt.SetTitle("targets")
	tt.AppendHeader(table.Row{"target", "want", "got", "met", "note"})
	for _, tg := range r.Targets {
		met := "no"
		switch {
		case tg.Skip:
			met = "skipped"
		case tg.Met:
			met = "yes"
		}
		tt.AppendRow(table.Row{tg.Name, tg.Want, f(tg.Got), met, tg.Note})
	}
	tt.Render()
}

// hotRows adds the hot part's lines: per path, each phase's rate and its
// masters' Redis CPU max/min; then the sweep.
func hotRows(t table.Writer, h Hot) {
	if h.Skipped != "" {
		t.AppendRow(table.Row{"hot", "skipped: " + h.Skipped})
		return
	}
	for _, p := range []struct {
		name string
		p    HotPath
	}{{"apply_batch", h.ApplyBatch}, {"transfer", h.Transfer}, {"http", h.HTTP}} {
		if p.p.Skipped != "" {
			t.AppendRow(table.Row{"hot", p.name + " skipped: " + p.p.Skipped})
			continue
		}
		ph := func(name string, x HotPhase) string {
			return fmt.Sprintf("%s %g/s, p99 %g ms, CPU max/min %g", name, x.PerSec, x.P99Ms, x.MastersCPUMaxOverMin)
		}
		t.AppendRow(table.Row{"hot", fmt.Sprintf("%s: payments to one merchant, hot of %d lanes", p.name, h.Lanes),
			ph("hot", p.p.Hot), ph("spread", p.p.Spread), fmt.Sprintf("%g", p.p.HotOverSpread)})
		t.AppendRow(table.Row{"hot", fmt.Sprintf("%s: the merchant plain", p.name),
			ph("plain", p.p.Plain), "", fmt.Sprintf("%g", p.p.PlainOverSpread)})
	}
	t.AppendRow(table.Row{"hot", fmt.Sprintf("sweep: %d sweeps, %d lanes moved", h.Sweep.Sweeps, h.Sweep.LanesMoved),
		fmt.Sprintf("%g ms per lane", h.Sweep.MsPerLane), fmt.Sprintf("Redis CPU %g µs per lane (scripts %g)", h.Sweep.RedisCPUUsecPerLane, h.Sweep.ScriptUsecPerLane), ""})
}

// ratioOrBlank is m[k] printed, or "" where m has no k (the floor itself).
func ratioOrBlank(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%g", v)
	}
	return ""
}

// floorRate is the system part's floor phase's rate.
func floorRate(s System) float64 {
	for _, p := range s.Phases {
		if p.Name == "floor" {
			return p.PerSec
		}
	}
	return 0
}

// writeSystemTables writes the system part's costs per phase: CPU per
// process and Redis's time by command family, per 1,000 operations.
func writeSystemTables(w io.Writer, s System) {
	if s.Skipped != "" || len(s.Phases) == 0 {
		return
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) } // no exponent for a million µs
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetTitle(fmt.Sprintf("system: %s; %d holders, %d clients, %gs a phase", s.Deployment, s.Holders, s.Clients, s.Seconds))
	t.AppendHeader(table.Row{"workload", "per s", "p50 ms", "p99 ms", "half load: p99 ms", "CPU s per 1,000: daemon", "redis", "postgres", "client", "all",
		"cores (all)", "PG bytes/op", "PG WAL/op", "events/op", "relay lag max ms", "drain s", "errors", "money"})
	for _, p := range s.Phases {
		c := p.CPUPer1000
		money := "exact"
		if !p.MoneyExact {
			money = "NOT EXACT"
		}
		t.AppendRow(table.Row{p.Name, f(p.PerSec), f(p.P50Ms), f(p.P99Ms), fmt.Sprintf("%s at %s/s, %s cores", f(p.HalfLoad.P99Ms), f(p.HalfLoad.Achieved), f(p.HalfLoad.Cores.All)),
			f(c.Daemon), f(c.Redis), f(c.Postgres), f(c.Client), f(c.All),
			f(p.Cores.All), f(p.PGBytesPerOp), f(p.PGWALPerOp), f(p.EventsPerOp), f(p.RelayLagMaxMs), f(p.DrainSeconds), f(float64(p.Errors + p.HalfLoad.Errors)), money})
	}
	money := "money exact"
	if !s.Money.Exact {
		money = "MONEY NOT EXACT"
	}
	for _, a := range s.Money.Assets {
		money += fmt.Sprintf("; %s put %d = held %d + left %d (diff %d)", a.Asset, a.PutIn, a.Held, a.LeftOut, a.Diff)
	}
	feed := fmt.Sprintf("Feed: %d events read from its start at %.0f/s", s.Feed.ReadEvents, s.Feed.ReadPerSec)
	if s.Feed.WebhookEvents > 0 {
		feed += fmt.Sprintf("; webhook: %d events, lag p50 %g / p99 %g / max %g ms, %d missing", s.Feed.WebhookEvents,
			s.Feed.WebhookLagP50Ms, s.Feed.WebhookLagP99Ms, s.Feed.WebhookLagMaxMs, s.Feed.WebhookMissing)
	}
	t.SetCaption("P2P / debit %g, hold+settle pairs / debit %g. Idle (%gs): daemon %g, redis %g, postgres %g cores. %s. %s.",
		s.Ratios.P2POverDebit, s.Ratios.HoldSettleOverDebit, s.IdleSeconds, s.Idle.Daemon, s.Idle.Redis, s.Idle.Postgres, money, feed)
	t.Render()

	families := []string{"fcall", "relay_read", "relay_remove", "wait", "client", "zrangebyscore", "other", "outside_commands", "used_cpu"}
	r := table.NewWriter()
	r.SetOutputMirror(w)
	r.SetTitle("system: Redis's time, µs per 1,000 operations, and × calls per operation (commandstats; used_cpu is INFO's used_cpu_sys + used_cpu_user)")
	head := table.Row{"workload"}
	for _, fam := range families {
		head = append(head, fam)
	}
	r.AppendHeader(head)
	for _, p := range s.Phases {
		row := table.Row{p.Name}
		for _, fam := range families {
			cell := f(p.RedisUsecPer1000[fam])
			if n, ok := p.RedisCallsPerOp[fam]; ok {
				cell += " ×" + f(n)
			}
			row = append(row, cell)
		}
		r.AppendRow(row)
	}
	r.Render()
}
