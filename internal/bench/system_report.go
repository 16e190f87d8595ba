package bench

// System is the whole deployment under HTTP load (the system part): one
// phase per workload, the floor last, and the money check at the end.
type System struct {
	Phases []SystemPhase `json:"phases"`
	Ratios SystemRatios  `json:"ratios"`
	Money  MoneyCheck    `json:"money"`
	Feed   SystemFeed    `json:"feed"`
	// Idle is the deployment's CPU with no load, in cores (the bench's own
	// client is left out: it is idle too), over IdleSeconds.
	Idle        ProcCPU `json:"idle_cores"`
	IdleSeconds float64 `json:"idle_s"`

	Deployment string  `json:"deployment"`
	Clients    int     `json:"clients"` // keep-alive HTTP clients, closed loop
	Holders    int     `json:"holders"`
	Seconds    float64 `json:"seconds"` // of load per phase
	Skipped    string  `json:"skipped,omitempty"`
}

// SystemPhase is one workload. Ops counts the operations answered as
// applied (hold_settle: pairs of a freeze and its settling transfer);
// latencies are of those, from the request to the whole answer (both
// requests of a pair). The costs are over the phase's window: from its
// first request until the relay had delivered every event it wrote.
type SystemPhase struct {
	Name   string  `json:"name"`
	PerSec float64 `json:"per_sec"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	// CPUPer1000 is CPU seconds per 1,000 operations of each process, from
	// /proc/<pid>/stat: the daemon, the redis-servers (summed), postgres
	// (the postmaster and its processes) and the bench's own clients.
	CPUPer1000 ProcCPU `json:"cpu_s_per_1000"`
	// Cores is the same CPU over the window's length: cores busy, of the
	// machine's.
	Cores ProcCPU `json:"cores"`
	// RedisUsedCPUPer1000 is INFO's used_cpu_sys + used_cpu_user over the
	// masters, seconds per 1,000 operations; RedisUsecPer1000 splits it in
	// µs per 1,000 operations by the commands' families (commandstats):
	// fcall (scripts, with the commands they call), relay_read,
	// relay_remove, wait, client (tracking), zrangebyscore (recovery, sweeper), other,
	// and outside_commands (sockets, event loop, AOF), with used_cpu;
	// RedisCallsPerOp counts each family's commands per operation.
	RedisUsedCPUPer1000 float64            `json:"redis_used_cpu_s_per_1000"`
	RedisUsecPer1000    map[string]float64 `json:"redis_usec_per_1000"`
	RedisCallsPerOp     map[string]float64 `json:"redis_calls_per_op"`
	PGBytesPerOp        float64            `json:"pg_bytes_per_op"`     // ledger schema, tables with their indexes and TOAST
	PGWALPerOp          float64            `json:"pg_wal_bytes_per_op"` // WAL written over the window: rows, indexes, cursors, and autovacuum's, a checkpoint's if any
	EventsPerOp         float64            `json:"events_per_op"`       // relayed, from the daemon's atomledger_relay_events_total
	DrainSeconds        float64            `json:"drain_s"`             // from the last answer to empty outboxes
	// RelayLagMaxMs is the highest the daemon's atomledger_relay_lag_ms
	// (the oldest undelivered event's age, as the relay measured it every
	// 2 s) read once a second during the load.
	RelayLagMaxMs float64 `json:"relay_lag_max_ms"`
	Window        float64 `json:"window_s"`
	Seconds       float64 `json:"seconds"` // of load
	Ops           int64   `json:"ops"`
	Errors        int64   `json:"errors"`
	FirstError    string  `json:"first_error,omitempty"`
	// MoneyExact is the money check (see MoneyCheck) right after the phase.
	MoneyExact bool `json:"money_exact"`
	// HalfLoad is the same workload at half per_sec, open loop, for a third
	// of the phase's length, after the window.
	HalfLoad HalfLoad `json:"half_load"`
}

// HalfLoad is a workload offered at a fixed rate, open loop: each
// operation's latency counts from when it was due, so that a stall counts
// for every operation it delays. The operations a checkout finds no coupon
// for count as errors.
type HalfLoad struct {
	Rate       float64 `json:"rate"`     // asked for
	Achieved   float64 `json:"achieved"` // served
	Ops        int64   `json:"ops"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	Seconds    float64 `json:"seconds"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	// CPUPer1000 and Cores are the processes' CPU over the half load, as
	// SystemPhase's: how busy the box still is at half the rate.
	CPUPer1000 ProcCPU `json:"cpu_s_per_1000"`
	Cores      ProcCPU `json:"cores"`
}

// ProcCPU is one figure per process of the deployment, and their sum.
type ProcCPU struct {
	Daemon   float64 `json:"daemon"`
	Redis    float64 `json:"redis"`
	Postgres float64 `json:"postgres"`
	Client   float64 `json:"client"`
	All      float64 `json:"all"`
}

// SystemRatios relate the phases' rates: each workload's to the floor's,
// P2P payments and hold + settle pairs to single debits.
type SystemRatios struct {
	ToFloor             map[string]float64 `json:"to_floor"`
	P2POverDebit        float64            `json:"p2p_over_debit"`
	HoldSettleOverDebit float64            `json:"hold_settle_over_debit"`
}

// MoneyCheck is the money check after the last phase (each phase has its
// own, MoneyExact): per asset, in minor units ("points" for points), what
// the holders hold (available and frozen, read through the engine) plus
// what left them (debits and checkouts answered applied, to the
// counterparties external and merchant:88) against what was put in.
type MoneyCheck struct {
	Exact   bool       `json:"exact"`
	Assets  []AssetSum `json:"assets"`
	Holders int        `json:"holders"`
	// Uncertain counts debits and checkouts with no answer or a server
	// error: each may have applied or not.
	Uncertain int64 `json:"uncertain"`
}

// AssetSum is one asset of the money check: Diff = Held + LeftOut - PutIn.
type AssetSum struct {
	Asset   string `json:"asset"`
	PutIn   int64  `json:"put_in"`
	Held    int64  `json:"held"`
	LeftOut int64  `json:"left_out"`
	Diff    int64  `json:"diff"`
}

// phase is the phase of that name, or a zero one.
func (s System) phase(name string) SystemPhase {
	for _, p := range s.Phases {
		if p.Name == name {
			return p
		}
	}
	return SystemPhase{}
}
