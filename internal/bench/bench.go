package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Parts lists the parts of a run, in the order they run.
var Parts = []string{"script_cost", "pipeline", "concurrent", "http", "contention", "transfer", "memory", "relay", "system", "hot"}

// Settings size a run. A zero field means its default; Quick gives small
// ones for a smoke run.
type Settings struct {
	Rounds         int           `json:"rounds"`             // alternated phases of each kind in script_cost. Default 5.
	LoadRounds     int           `json:"load_rounds"`        // alternated phases of each kind in pipeline and concurrent. Default 5.
	Calls          int           `json:"calls"`              // script runs per script_cost phase. Default 2000.
	Breakdown      bool          `json:"breakdown"`          // measure the checkout's truncated variants too. Default false (the command sets it).
	BreakdownRnd   int           `json:"breakdown_rounds"`   // rounds of the breakdown. Default 5.
	BreakdownCalls int           `json:"breakdown_calls"`    // script runs per breakdown phase. Default 1000.
	Ops            int           `json:"ops"`                // instructions per pipeline and concurrent phase. Default 20000.
	Holders        int           `json:"holders"`            // holders of the memory part. Default 100000.
	LoadHolders    int           `json:"load_holders"`       // holders the pipeline, concurrent and http parts spread over. Default 10000.
	BatchSize      int           `json:"batch_size"`         // instructions per ApplyBatch (pipeline). Default 100.
	BatchWorkers   int           `json:"batch_workers"`      // goroutines sending batches at once (pipeline). Default 4.
	Workers        int           `json:"workers"`            // goroutines of concurrent, contention and transfer, clients of http. Default 64.
	HTTPDuration   time.Duration `json:"http_duration_ns"`   // each http phase. Default 5s.
	Contention     time.Duration `json:"contention_ns"`      // each contention scheme. Default 3s.
	TransferDur    time.Duration `json:"transfer_ns"`        // each transfer and single phase (LoadRounds of each). Default 2s.
	RelayDur       time.Duration `json:"relay_duration_ns"`  // the sustained relay run. Default 15s (the figure is for 60s).
	RelayProbe     time.Duration `json:"relay_probe_ns"`     // each probe of the relay's rate search. Default 3s.
	RelayHolders   int           `json:"relay_holders"`      // holders the relay's load spreads over. Default 2000.
	LagLimit       time.Duration `json:"relay_lag_limit_ns"` // lag p99 a sustained rate must stay under. Default 1s.
	SystemDuration time.Duration `json:"system_duration_ns"` // each phase of the system part. Default 10s.
	SystemClients  int           `json:"system_clients"`     // keep-alive HTTP clients of the system part. Default 32.
	SystemHolders  int           `json:"system_holders"`     // holders of the system part. Default 1000.
	SystemWebhook  bool          `json:"system_webhook"`     // the daemon delivers the feed to a webhook of the bench's during the system part. Default false.
	HotDur         time.Duration `json:"hot_ns"`             // each phase of the hot part. Default 2s.
	HotRounds      int           `json:"hot_rounds"`         // rounds of the hot part's three phases, alternated, per path. Default 2.
	HotPayers      int           `json:"hot_payers"`         // payers of the hot part, and payees of its spread phase. Default 1000.
}

func (s Settings) withDefaults() Settings {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&s.Rounds, 5)
	def(&s.LoadRounds, 5)
	def(&s.Calls, 2000)
	def(&s.BreakdownRnd, 5)
	def(&s.BreakdownCalls, 1000)
	def(&s.Ops, 20000)
	def(&s.Holders, 100000)
	def(&s.LoadHolders, 10000)
	def(&s.BatchSize, 100)
	def(&s.BatchWorkers, 4)
	def(&s.Workers, 64)
	def(&s.RelayHolders, 2000)
	def(&s.SystemClients, 32)
	def(&s.SystemHolders, 1000)
	def(&s.HotRounds, 2)
	def(&s.HotPayers, 1000)
	defDur(&s.HTTPDuration, 5*time.Second)
	defDur(&s.Contention, 3*time.Second)
	defDur(&s.TransferDur, 2*time.Second)
	defDur(&s.RelayDur, 15*time.Second)
	defDur(&s.RelayProbe, 3*time.Second)
	defDur(&s.LagLimit, time.Second)
	defDur(&s.SystemDuration, 10*time.Second)
	defDur(&s.HotDur, 2*time.Second)
	return s
}

// Quick are settings for a smoke run of a few seconds per part: the figures
// mean little, the counting is checked all the same.
func Quick() Settings {
	return Settings{Rounds: 2, LoadRounds: 2, Calls: 200, BreakdownRnd: 1, BreakdownCalls: 100, Ops: 1000, Holders: 2000, LoadHolders: 200,
		BatchWorkers: 2, Workers: 16, HTTPDuration: time.Second, Contention: 500 * time.Millisecond, TransferDur: time.Second,
		RelayDur: 2 * time.Second, RelayProbe: time.Second, RelayHolders: 100,
		SystemDuration: time.Second, SystemClients: 8, SystemHolders: 100,
		HotDur: 300 * time.Millisecond, HotRounds: 1, HotPayers: 100}
}

// Merge gives s with every field over sets (a count or duration above
// zero; SystemWebhook when true): engined bench's flags over Quick.
func (s Settings) Merge(over Settings) Settings {
	pick(&s.Rounds, over.Rounds)
	pick(&s.LoadRounds, over.LoadRounds)
	pick(&s.Calls, over.Calls)
	pick(&s.BreakdownRnd, over.BreakdownRnd)
	pick(&s.BreakdownCalls, over.BreakdownCalls)
	pick(&s.Ops, over.Ops)
	pick(&s.LoadHolders, over.LoadHolders)
	pick(&s.BatchWorkers, over.BatchWorkers)
	pick(&s.Workers, over.Workers)
	pick(&s.Holders, over.Holders)
	pick(&s.RelayHolders, over.RelayHolders)
	pick(&s.SystemClients, over.SystemClients)
	pick(&s.SystemHolders, over.SystemHolders)
	pick(&s.HotRounds, over.HotRounds)
	pick(&s.HotPayers, over.HotPayers)
	pick(&s.HotDur, over.HotDur)
	pick(&s.SystemDuration, over.SystemDuration)
	pick(&s.HTTPDuration, over.HTTPDuration)
	pick(&s.Contention, over.Contention)
	pick(&s.TransferDur, over.TransferDur)
	pick(&s.RelayDur, over.RelayDur)
	pick(&s.RelayProbe, over.RelayProbe)
	s.SystemWebhook = s.SystemWebhook || over.SystemWebhook
	return s
}

// pick sets *v to o when o is above zero.
func pick[T int | time.Duration](v *T, o T) {
	if o > 0 {
		*v = o
	}
}

// Options configure Run. A zero field means its default.
type Options struct {
	Settings Settings
	// Parts to run, by name (see Parts). Default: all.
	Parts []string
	// Redis names an existing Redis (one address: a plain server unless
	// RedisCluster; several: a cluster). Default: none, Run starts a local
	// cluster of 3 masters and flushes it between parts.
	Redis        []string
	RedisCluster bool
	Username     string
	Password     string
	TLS          *tls.Config
	// Standalone makes the server Run starts a single plain one rather than
	// a cluster. Default false.
	Standalone bool
	// PGDSN names the PostgreSQL database of the relay part. Default: a
	// temporary server started for the run (ledger/pgtest), or the relay
	// part is skipped when none can be started.
	PGDSN string
	// Daemon is the command that runs engined (argv without "serve"), for
	// the http part. Default: none, the part is skipped.
	Daemon []string
	// Progress receives each step of each part. Default: nothing.
	Progress func(Step)
	// Log receives notes meant for a human (what was skipped and why).
	// Default: io.Discard.
	Log io.Writer
}

// Step tells where a run is: Done of Total steps of Part.
type Step struct {
	Part        string
	Done, Total int
	Note        string
}

// Run runs the parts and returns the report. An error ends the run only
// when the environment fails (Redis cannot be started or reached); a part
// that cannot run is reported as skipped with its reason.
func Run(ctx context.Context, opt Options) (*Report, error) {
	start := time.Now()
	s := opt.Settings.withDefaults()
	opt.Settings = s
	parts := opt.Parts
	if len(parts) == 0 {
		parts = Parts
	}
	for _, p := range parts {
		if !slices.Contains(Parts, p) {
			return nil, fmt.Errorf("bench: unknown part %q (parts: %s)", p, strings.Join(Parts, ", "))
		}
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	env, err := newEnv(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer env.close()

	rep := &Report{Machine: Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		RedisVersion: env.version, Topology: env.topology, Settings: s, PartSeconds: map[string]float64{}}}
	const notRun = "not asked for (--parts)"
	rep.ScriptCost.Skipped, rep.Pipeline.Skipped, rep.Concurrent.Skipped, rep.HTTP.Skipped = notRun, notRun, notRun, notRun
	rep.Contention.Skipped, rep.Memory.Skipped, rep.Relay.Skipped, rep.Transfer.Skipped = notRun, notRun, notRun, notRun
	rep.System.Skipped, rep.Hot.Skipped = notRun, notRun

	var load *loadSet // holders shared by concurrent and http
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p != "http" || load == nil {
			// Each part starts on a clean server (the memory part above all);
			// http follows concurrent on its holders, to compare with it.
			if err := env.reset(ctx); err != nil {
				return nil, err
			}
			load = nil
		}
		var err error
		partStart := time.Now()
		switch p {
		case "script_cost":
			rep.ScriptCost, err = runScriptCost(ctx, env)
		case "pipeline", "concurrent", "http":
			if load == nil {
				if load, err = newLoadSet(ctx, env, p); err != nil {
					break
				}
			}
			switch p {
			case "pipeline":
				rep.Pipeline, err = runPipeline(ctx, env, load)
			case "concurrent":
				rep.Concurrent, err = runConcurrent(ctx, env, load)
			case "http":
				rep.HTTP, err = runHTTP(ctx, env, load, rep.Concurrent)
			}
		case "contention":
			rep.Contention, err = runContention(ctx, env)
		case "transfer":
			rep.Transfer, err = runTransfer(ctx, env)
		case "memory":
			rep.Memory, err = runMemory(ctx, env)
		case "relay":
			rep.Relay, err = runRelay(ctx, env)
		case "system":
			rep.System, err = runSystem(ctx, env)
		case "hot":
			rep.Hot, err = runHot(ctx, env)
		}
		rep.Machine.PartSeconds[p] = round(time.Since(partStart).Seconds())
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var skip skipError
			if !errors.As(err, &skip) {
				return nil, fmt.Errorf("bench %s: %w", p, err)
			}
			fmt.Fprintf(opt.Log, "%s: skipped: %s\n", p, skip.reason)
			setSkipped(rep, p, skip.reason)
		}
	}
	rep.Machine.Seconds = round(time.Since(start).Seconds())
	rep.Targets = targets(rep)
	return rep, nil
}

// skipError is a part that cannot run here, with the reason the report gives.
type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

func skipf(format string, args ...any) error { return skipError{reason: fmt.Sprintf(format, args...)} }

func setSkipped(rep *Report, part, reason string) {
	switch part {
	case "script_cost":
		rep.ScriptCost = ScriptCost{Skipped: reason}
	case "pipeline":
		rep.Pipeline = Compare{Skipped: reason}
	case "concurrent":
		rep.Concurrent = Compare{Skipped: reason}
	case "http":
		rep.HTTP = HTTP{Skipped: reason}
	case "contention":
		rep.Contention = Contention{Skipped: reason}
	case "memory":
		rep.Memory = Memory{Skipped: reason}
	case "relay":
		rep.Relay = Relay{Skipped: reason}
	case "transfer":
		rep.Transfer = Transfer{Skipped: reason}
	case "system":
		rep.System = System{Skipped: reason}
	case "hot":
		rep.Hot = Hot{Skipped: reason}
	}
}
