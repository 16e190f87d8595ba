package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/atomledger/atomledger/internal/bench"
)

func benchUsage(w io.Writer) {
	fmt.Fprintf(w, `Usage: engined bench [flags]

Bench measures atomledger against its baselines, side by side in one run,
and prints a table (docs/benchmarks.md explains each figure):

  script_cost  server time per FCALL (INFO commandstats) of a four-op checkout
               (with flat arguments, and as JSON through apply_json) and of a
               1-op debit against the seed article's single-key deduct
               script, run as a function
  pipeline     ApplyBatch against raw pipelined FCALL, same arguments
  concurrent   Apply from many goroutines against raw FCALL
  http         engined serve (a process of its own) under keep-alive clients
  contention   GET/SET, SET NX lock, WATCH/MULTI and the script on one account
  transfer     two-part trades across masters against one instruction per trade side
  memory       bytes per typical trading holder
  relay        the outbox rate the relay and PostgreSQL keep up with
  system       the whole deployment on one machine, started by the part itself
               (Redis Cluster with AOF everysec, engined serve with the relay
               into PostgreSQL): debits, P2P payments, hold + settle pairs,
               checkouts and the floor (serve --bench-floor) over HTTP, with
               CPU per process, Redis's time by command, ledger bytes and an
               exact money check
  hot          P2P payments from 1,000 payers to one merchant: plain, hot
               (2 x the masters lanes) and spread over 1,000 payees, through
               ApplyBatch, engine.Transfer and POST /v1/transfers, with each
               master's share of the Redis CPU, and the sweep's cost

Without --redis it starts its own Redis Cluster (3 masters, no replicas) and
flushes it between parts; with --redis it writes bench-* holders, outbox
events and resets the servers' statistics there: give it a scratch cluster.
Only the flags --redis and --pg choose servers (not their environment
variables, so that a shell set up for production cannot aim a bench at it).
Without --pg the relay part starts a temporary PostgreSQL (initdb on PATH
or in /usr/lib/postgresql/*/bin), or is skipped. The system part always
starts its own Redis Cluster and PostgreSQL, whatever --redis and --pg say:
it reads their processes' CPU.

A default run takes about six minutes (the system part about 80 s of
them, the hot part about 40 s). Exit status 0 when the run ends, whether the targets hold or not (the
table says); 1 when it cannot run.

Flags:

  --json             print the report as JSON on stdout (the table goes to stderr)
  --parts LIST       run only these parts, comma-separated (default all: %s)
  --quick            small sizes for a smoke run of a few seconds a part
  --rounds N         alternated phases of each kind in script_cost (default 5)
  --load-rounds N    alternated phases of each kind in pipeline, concurrent (default 5)
  --calls N          script runs per script_cost phase (default 2000)
  --breakdown        measure truncated variants of the apply function (default true)
  --breakdown-rounds N  (default 5)
  --ops N            instructions per pipeline and concurrent phase (default 20000)
  --load-holders N   holders of the pipeline, concurrent and http parts (default 10000)
  --batch-workers N  batches in flight at once in the pipeline part (default 4)
  --workers N        goroutines of concurrent, contention and transfer, clients of http (default 64)
  --holders N        holders of the memory part (default 100000)
  --http-duration D  each http phase (default 5s)
  --contention-duration D  each contention scheme (default 3s)
  --transfer-duration D    each transfer and single phase, --load-rounds of each (default 2s)
  --relay-duration D the sustained relay run (default 15s; the target is for 60s)
  --relay-probe D    each probe of the relay's rate search (default 3s)
  --relay-holders N  holders of the relay part (default 2000)
  --system-duration D  each phase of the system part (default 10s)
  --system-clients N   keep-alive HTTP clients of the system part (default 32)
  --system-holders N   holders of the system part (default 1000)
  --hot-duration D     each phase of the hot part (default 2s)
  --hot-rounds N       rounds of the hot part's three phases per path (default 2)
  --hot-payers N       payers of the hot part, payees of its spread phase (default 1000)
  --standalone       start a single plain Redis instead of a cluster

`, strings.Join(bench.Parts, ","))
	printConfigUsage(w)
}

// runBench is "engined bench".
func runBench(args []string, c cli) int {
	f := newCommandFlags("bench", c, benchUsage)
	fs := f.fs
	asJSON := fs.Bool("json", false, "print the report as JSON")
	parts := fs.String("parts", "", "parts to run, comma-separated")
	quick := fs.Bool("quick", false, "small sizes for a smoke run")
	breakdown := fs.Bool("breakdown", true, "measure truncated variants of the apply function")
	standalone := fs.Bool("standalone", false, "start a single plain Redis")
	var s bench.Settings
	fs.IntVar(&s.Rounds, "rounds", 0, "alternated phases of each kind in script_cost")
	fs.IntVar(&s.LoadRounds, "load-rounds", 0, "alternated phases of each kind in pipeline and concurrent")
	fs.IntVar(&s.Calls, "calls", 0, "script runs per script_cost phase")
	fs.IntVar(&s.BreakdownRnd, "breakdown-rounds", 0, "rounds of the breakdown")
	fs.IntVar(&s.BreakdownCalls, "breakdown-calls", 0, "script runs per breakdown phase")
	fs.IntVar(&s.Ops, "ops", 0, "instructions per pipeline and concurrent phase")
	fs.IntVar(&s.LoadHolders, "load-holders", 0, "holders of the pipeline, concurrent and http parts")
	fs.IntVar(&s.BatchWorkers, "batch-workers", 0, "batches in flight in the pipeline part")
	fs.IntVar(&s.Workers, "workers", 0, "goroutines of concurrent, contention and transfer, clients of http")
	fs.IntVar(&s.Holders, "holders", 0, "holders of the memory part")
	fs.IntVar(&s.RelayHolders, "relay-holders", 0, "holders of the relay part")
	fs.DurationVar(&s.HTTPDuration, "http-duration", 0, "each http phase")
	fs.DurationVar(&s.Contention, "contention-duration", 0, "each contention scheme")
	fs.DurationVar(&s.TransferDur, "transfer-duration", 0, "each transfer and single phase")
	fs.DurationVar(&s.RelayDur, "relay-duration", 0, "the sustained relay run")
	fs.DurationVar(&s.RelayProbe, "relay-probe", 0, "each probe of the relay's rate search")
	fs.DurationVar(&s.SystemDuration, "system-duration", 0, "each phase of the system part")
	fs.IntVar(&s.SystemClients, "system-clients", 0, "keep-alive HTTP clients of the system part")
	fs.IntVar(&s.SystemHolders, "system-holders", 0, "holders of the system part")
	fs.DurationVar(&s.HotDur, "hot-duration", 0, "each phase of the hot part")
	fs.IntVar(&s.HotRounds, "hot-rounds", 0, "rounds of the hot part's three phases per path")
	fs.IntVar(&s.HotPayers, "hot-payers", 0, "payers of the hot part")
	fs.BoolVar(&s.SystemWebhook, "system-webhook", false, "the daemon delivers the feed to a webhook of the bench's during the system part (its lag reported)")
	if status, ok := f.parse(args); !ok {
		return status
	}
	cfg, err := f.config()
	if err != nil {
		return f.fail("%v", err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *quick {
		s = mergeSettings(bench.Quick(), s)
	}
	s.Breakdown = *breakdown
	opt := bench.Options{Settings: s, Standalone: *standalone, Log: c.stderr}
	if *parts != "" {
		opt.Parts = strings.Split(*parts, ",")
	}
	if given["redis"] {
		opt.Redis, opt.RedisCluster = cfg.RedisAddrs, cfg.RedisCluster
		opt.Username, opt.Password = cfg.RedisUsername, cfg.RedisPassword
		opt.TLS = cfg.redisTLSConfig()
	}
	if given["pg"] {
		opt.PGDSN = cfg.PGDSN
	}
	if exe, err := os.Executable(); err == nil {
		opt.Daemon = []string{exe}
	}
	progress := newBenchProgress(c.stderr)
	opt.Progress = progress.step

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, opt)
	progress.finish()
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", f.name, err)
		return exitFailed
	}
	if *asJSON {
		printBenchTables(c.stderr, rep)
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(c.stderr, "%s: %v\n", f.name, err)
			return exitFailed
		}
		return exitOK
	}
	printBenchTables(c.stdout, rep)
	return exitOK
}

// mergeSettings gives base with every field that over sets.
func mergeSettings(base, over bench.Settings) bench.Settings {
	pick := func(b *int, o int) {
		if o > 0 {
			*b = o
		}
	}
	pick(&base.Rounds, over.Rounds)
	pick(&base.LoadRounds, over.LoadRounds)
	pick(&base.Calls, over.Calls)
	pick(&base.BreakdownRnd, over.BreakdownRnd)
	pick(&base.BreakdownCalls, over.BreakdownCalls)
	pick(&base.Ops, over.Ops)
	pick(&base.LoadHolders, over.LoadHolders)
	pick(&base.BatchWorkers, over.BatchWorkers)
	pick(&base.Workers, over.Workers)
	pick(&base.Holders, over.Holders)
	pick(&base.RelayHolders, over.RelayHolders)
	pick(&base.SystemClients, over.SystemClients)
	pick(&base.SystemHolders, over.SystemHolders)
	pick(&base.HotRounds, over.HotRounds)
	pick(&base.HotPayers, over.HotPayers)
	if over.HotDur > 0 {
		base.HotDur = over.HotDur
	}
	base.SystemWebhook = base.SystemWebhook || over.SystemWebhook
	if over.SystemDuration > 0 {
		base.SystemDuration = over.SystemDuration
	}
	if over.HTTPDuration > 0 {
		base.HTTPDuration = over.HTTPDuration
	}
	if over.Contention > 0 {
		base.Contention = over.Contention
	}
	if over.TransferDur > 0 {
		base.TransferDur = over.TransferDur
	}
	if over.RelayDur > 0 {
		base.RelayDur = over.RelayDur
	}
	if over.RelayProbe > 0 {
		base.RelayProbe = over.RelayProbe
	}
	return base
}

// benchProgress draws one bar per part on a terminal, nothing elsewhere.
type benchProgress struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	part string
}

func newBenchProgress(w io.Writer) *benchProgress {
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return &benchProgress{}
	}
	return &benchProgress{w: w}
}

func (p *benchProgress) step(s bench.Step) {
	if p.w == nil {
		return
	}
	if s.Part != p.part || p.bar == nil {
		p.finish()
		p.part = s.Part
		p.bar = progressbar.NewOptions(max(1, s.Total), progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(fmt.Sprintf("%-11s", s.Part)), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish())
	}
	p.bar.ChangeMax(max(1, s.Total))
	desc := fmt.Sprintf("%-11s", s.Part)
	if s.Note != "" {
		desc += " " + s.Note
	}
	p.bar.Describe(desc)
	_ = p.bar.Set(s.Done)
}

func (p *benchProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}

// printBenchTables prints the summary, the checkout's breakdown, the cost
// of each key and the targets.
func printBenchTables(w io.Writer, r *bench.Report) {
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
		c             bench.Compare
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
		scheme := func(name string, s bench.Scheme) string {
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
	printSystemTables(w, r.System)
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
func hotRows(t table.Writer, h bench.Hot) {
	if h.Skipped != "" {
		t.AppendRow(table.Row{"hot", "skipped: " + h.Skipped})
		return
	}
	for _, p := range []struct {
		name string
		p    bench.HotPath
	}{{"apply_batch", h.ApplyBatch}, {"transfer", h.Transfer}, {"http", h.HTTP}} {
		if p.p.Skipped != "" {
			t.AppendRow(table.Row{"hot", p.name + " skipped: " + p.p.Skipped})
			continue
		}
		ph := func(name string, x bench.HotPhase) string {
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
func floorRate(s bench.System) float64 {
	for _, p := range s.Phases {
		if p.Name == "floor" {
			return p.PerSec
		}
	}
	return 0
}

// printSystemTables prints the system part's costs per phase: CPU per
// process and Redis's time by command family, per 1,000 operations.
func printSystemTables(w io.Writer, s bench.System) {
	if s.Skipped != "" || len(s.Phases) == 0 {
		return
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) } // no exponent for a million µs
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetTitle(fmt.Sprintf("system: %s; %d holders, %d clients, %gs a phase", s.Deployment, s.Holders, s.Clients, s.Seconds))
	t.AppendHeader(table.Row{"workload", "per s", "p50 ms", "p99 ms", "half load: p99 ms", "CPU s per 1,000: daemon", "redis", "postgres", "client", "all",
		"cores (all)", "PG bytes/op", "events/op", "relay lag max ms", "drain s", "errors", "money"})
	for _, p := range s.Phases {
		c := p.CPUPer1000
		money := "exact"
		if !p.MoneyExact {
			money = "NOT EXACT"
		}
		t.AppendRow(table.Row{p.Name, f(p.PerSec), f(p.P50Ms), f(p.P99Ms), fmt.Sprintf("%s at %s/s", f(p.HalfLoad.P99Ms), f(p.HalfLoad.Achieved)),
			f(c.Daemon), f(c.Redis), f(c.Postgres), f(c.Client), f(c.All),
			f(p.Cores.All), f(p.PGBytesPerOp), f(p.EventsPerOp), f(p.RelayLagMaxMs), f(p.DrainSeconds), f(float64(p.Errors + p.HalfLoad.Errors)), money})
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
