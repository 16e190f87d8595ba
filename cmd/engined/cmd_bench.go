package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

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
		s = bench.Quick().Merge(s)
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
		bench.WriteTables(c.stderr, rep)
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(c.stderr, "%s: %v\n", f.name, err)
			return exitFailed
		}
		return exitOK
	}
	bench.WriteTables(c.stdout, rep)
	return exitOK
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
