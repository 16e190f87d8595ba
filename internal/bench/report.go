package bench

import "math"

// Report is the outcome of one run. Its JSON holds the fields the issue asks
// for (script_cost ... relay, each with its figures, and transfer) and more: the machine,
// the settings, and the targets with whether each holds.
type Report struct {
	ScriptCost ScriptCost `json:"script_cost"`
	Pipeline   Compare    `json:"pipeline"`
	Concurrent Compare    `json:"concurrent"`
	HTTP       HTTP       `json:"http"`
	Contention Contention `json:"contention"`
	Memory     Memory     `json:"memory"`
	Relay      Relay      `json:"relay"`
	Transfer   Transfer   `json:"transfer"`
	System     System     `json:"system"`
	Hot        Hot        `json:"hot"`

	Machine Machine  `json:"machine"`
	Targets []Target `json:"targets"`
}

// ScriptCost compares the server's time per call (INFO commandstats,
// usec_per_call of fcall) of the checkout instruction and of a 1-op debit
// with the seed article's single-key deduct script, run as a function.
type ScriptCost struct {
	SeedDeductUsec float64 `json:"seed_deduct_usec"` // median over the deduct phases
	CheckoutUsec   float64 `json:"checkout_usec"`    // median over the checkout phases
	Ratio          float64 `json:"ratio"`            // checkout_usec / seed_deduct_usec
	DebitUsec      float64 `json:"debit_usec"`       // a 1-op debit with its record and event, median over its phases
	DebitRatio     float64 `json:"debit_ratio"`      // debit_usec / seed_deduct_usec
	// FloorDebitUsec is the same debit through floorDebit: the design's calls
	// and the least Lua a debit can do; FloorRatio is it over the deduct,
	// DebitOverFloor the library's debit over it.
	FloorDebitUsec float64 `json:"floor_debit_usec"`
	FloorRatio     float64 `json:"floor_ratio"`
	DebitOverFloor float64 `json:"debit_over_floor"`
	// FloorCheckoutUsec, FloorCheckoutRatio and CheckoutOverFloor are the
	// same for the checkout, through floorCheckout.
	FloorCheckoutUsec  float64 `json:"floor_checkout_usec"`
	FloorCheckoutRatio float64 `json:"floor_checkout_ratio"`
	CheckoutOverFloor  float64 `json:"checkout_over_floor"`
	// JSONUsec is the same checkout sent through the JSON door (apply_json:
	// one JSON argument, decoded and checked in Lua), median over its phases;
	// JSONRatio is json_checkout_usec / seed_deduct_usec, beside ratio, and
	// JSONOverFlat json_checkout_usec / checkout_usec. No target.
	JSONUsec     float64 `json:"json_checkout_usec"`
	JSONRatio    float64 `json:"json_ratio"`
	JSONOverFlat float64 `json:"json_over_flat"`

	Rounds        int       `json:"rounds"`          // phases of each kind, alternated
	CallsPerPhase int       `json:"calls_per_phase"` // script runs measured in each phase
	SeedPhases    []float64 `json:"seed_phases_usec"`
	CheckoutPhase []float64 `json:"checkout_phases_usec"`
	DebitPhases   []float64 `json:"debit_phases_usec"`
	FloorPhases   []float64 `json:"floor_phases_usec"`
	JSONPhases    []float64 `json:"json_phases_usec"`
	// Commands are the Redis commands one checkout calls from Lua: calls and
	// server time (usec) per checkout, from the same phases.
	Commands []CommandCost `json:"commands_per_checkout,omitempty"`
	// InCommandsUsec is the part of checkout_usec spent inside those
	// commands; the rest is the Lua interpreter running the script.
	InCommandsUsec float64 `json:"in_commands_usec"`
	// RedisCallUsec is what one redis.call of a command that does almost
	// nothing (HGET of one field of the meta hash) adds to a script: the
	// price of going from Lua to Redis and back.
	RedisCallUsec float64 `json:"redis_call_usec,omitempty"`
	// Breakdown is the waterfall of truncated variants of the script.
	Breakdown []Stage `json:"breakdown,omitempty"`
	Skipped   string  `json:"skipped,omitempty"`
}

// CommandCost is one Redis command as called by the checkout script.
type CommandCost struct {
	Command string  `json:"command"`
	Calls   float64 `json:"calls"` // per checkout
	Usec    float64 `json:"usec"`  // per checkout, in total
}

// Stage is one variant of the apply script that stops before a part of it:
// CumulativeUsec is the time per call of the script up to there, StageUsec
// what this part adds to the previous stage (medians, so noise can make a
// small one negative).
type Stage struct {
	Stage          string  `json:"stage"`
	CumulativeUsec float64 `json:"cumulative_usec"`
	StageUsec      float64 `json:"stage_usec"`
}

// Compare is the engine against raw FCALL of the same arguments.
type Compare struct {
	EnginePerSec float64 `json:"engine_per_sec"` // median over the rounds
	RawPerSec    float64 `json:"raw_per_sec"`    // median over the rounds
	Ratio        float64 `json:"ratio"`          // median of each round's engine/raw

	EnginePhases []float64 `json:"engine_phases_per_sec"`
	RawPhases    []float64 `json:"raw_phases_per_sec"`
	Rounds       int       `json:"rounds"`
	OpsPerPhase  int       `json:"ops_per_phase"`
	Workers      int       `json:"workers"`
	BatchSize    int       `json:"batch_size,omitempty"`
	Holders      int       `json:"holders"`
	Errors       int64     `json:"errors"`
	Skipped      string    `json:"skipped,omitempty"`
}

// HTTP is the daemon under load.
type HTTP struct {
	PerSec         float64 `json:"per_sec"`          // 64 keep-alive clients, closed loop
	P50Ms          float64 `json:"p50_ms"`           // at half of per_sec, open loop
	P99Ms          float64 `json:"p99_ms"`           // at half of per_sec, open loop
	RatioToLibrary float64 `json:"ratio_to_library"` // per_sec / concurrent.engine_per_sec

	// P99ServiceMs counts from when a request was sent rather than due:
	// without the wait for a free client when the daemon falls behind.
	P99ServiceMs  float64 `json:"p99_service_ms"`
	Clients       int     `json:"clients"`
	HalfLoadRate  float64 `json:"half_load_rate"`     // the rate asked for
	HalfLoadAchvd float64 `json:"half_load_achieved"` // the rate served
	Errors        int64   `json:"errors"`
	Skipped       string  `json:"skipped,omitempty"`
}

// Contention is the seed article's four schemes on one hot account.
type Contention struct {
	Lua    Scheme `json:"lua"`
	Watch  Scheme `json:"watch"`
	Lock   Scheme `json:"lock"`
	GetSet Scheme `json:"getset"`

	Workers     int     `json:"workers"`
	Seconds     float64 `json:"seconds"`       // per scheme
	LuaVsWatch  float64 `json:"lua_vs_watch"`  // lua.per_sec / watch.per_sec
	LockTTLMs   int     `json:"lock_ttl_ms"`   // PX of the lock
	LockWaitMs  int     `json:"lock_wait_ms"`  // how long a worker tries to take the lock before a timeout
	WatchMaxTry int     `json:"watch_max_try"` // 0: retry until the end
	Skipped     string  `json:"skipped,omitempty"`
}

// Scheme is one way to deduct: successful deductions per second, and lost
// updates (successes the final balance does not show). Retries and
// Timeouts are given by WATCH and the lock; Expired counts lock releases
// that found the lock gone (its TTL ran out while held).
type Scheme struct {
	PerSec   float64 `json:"per_sec"`
	Lost     int64   `json:"lost"`
	Retries  *int64  `json:"retries,omitempty"`
	Timeouts *int64  `json:"timeouts,omitempty"`
	Expired  *int64  `json:"expired,omitempty"`
	Ok       int64   `json:"ok"`
	Errors   int64   `json:"errors"`
}

// Memory is what a typical trading holder costs in Redis.
type Memory struct {
	// BytesPerHolder is what stays: used_memory growth per holder once its
	// idempotency record has expired and the relay has deleted its event.
	BytesPerHolder float64 `json:"bytes_per_holder"`
	// WithTransient counts the idempotency record and the outbox event too.
	WithTransient float64 `json:"bytes_per_holder_with_transient"`
	// TxRecord is MEMORY USAGE of one remembered id of a 1-op debit.
	TxRecord    float64 `json:"tx_record_bytes"`
	OpenRecord  float64 `json:"open_record_bytes"`  // used_memory freed per holder by DEL of the records of the instructions that opened them
	OutboxEvent float64 `json:"outbox_event_bytes"` // used_memory freed per holder by XDEL of the events
	// Keys is MEMORY USAGE of each key of a holder, averaged over a sample,
	// plus the holder's share of its slot's expiry index and outbox (their
	// growth over the holders).
	Keys    []KeyCost `json:"keys"`
	Holders int       `json:"holders"`
	Skipped string    `json:"skipped,omitempty"`
}

// KeyCost is MEMORY USAGE of one key of a holder.
type KeyCost struct {
	Key   string  `json:"key"`
	Bytes float64 `json:"bytes"`
}

// Relay is the highest rate the relay and the PostgreSQL sink keep up with.
type Relay struct {
	SustainedPerSec float64 `json:"sustained_per_sec"` // events committed per second over the sustained run
	LagP99Ms        float64 `json:"lag_p99_ms"`        // commit time minus event time, p99, at that rate

	LagP50Ms float64 `json:"lag_p50_ms"`
	Offered  float64 `json:"offered_per_sec"` // the rate instructions were applied at
	Seconds  float64 `json:"seconds"`         // length of the sustained run
	Probes   []Probe `json:"probes"`          // the search for the rate
	Sustain  []Probe `json:"sustain_runs"`    // the sustained runs, the last one reported
	Holders  int     `json:"holders"`
	Skipped  string  `json:"skipped,omitempty"`
}

// Transfer is a two-part trade (a cross-holder transfer) against one
// instruction doing one side of it, from the same number of workers.
type Transfer struct {
	PerSec       float64 `json:"per_sec"`        // committed transfers per second, median over the rounds
	SinglePerSec float64 `json:"single_per_sec"` // single instructions per second, median over the rounds
	Ratio        float64 `json:"ratio"`          // median of each round's per_sec / single_per_sec
	// PaymentPerSec is the same for a P2P payment (one payer: debit the
	// buyer, credit the seller), PaymentRatio its rate over single_per_sec,
	// PaymentServerUsec the servers' script time per payment.
	PaymentPerSec     float64 `json:"payment_per_sec"`
	PaymentRatio      float64 `json:"payment_ratio"`
	PaymentServerUsec float64 `json:"payment_server_usec"`
	P50Ms             float64 `json:"p50_ms"` // latency of a transfer, from the call to its answer
	P99Ms             float64 `json:"p99_ms"`
	// Aborted counts the transfers that did not come back committed and
	// complete (or failed): there is nothing to refuse, so it should be 0.
	Aborted int64 `json:"aborted"`
	// ServerUsec is the servers' time in script runs per committed transfer,
	// on all masters (INFO commandstats), median over the phases;
	// SingleServerUsec the same per single instruction.
	ServerUsec       float64 `json:"server_usec"`
	SingleServerUsec float64 `json:"single_server_usec"`

	Phases        []float64 `json:"phases_per_sec"`
	PaymentPhases []float64 `json:"payment_phases_per_sec"`
	SinglePhases  []float64 `json:"single_phases_per_sec"`
	Transfers     int64     `json:"transfers"` // committed, over all phases
	Singles       int64     `json:"singles"`
	Pairs         int       `json:"pairs"`
	CrossMaster   int       `json:"cross_master_pairs"` // pairs whose two holders are on different masters
	Workers       int       `json:"workers"`
	Rounds        int       `json:"rounds"`
	Seconds       float64   `json:"seconds"` // per phase
	Skipped       string    `json:"skipped,omitempty"`
}

// Hot is P2P payments from many payers to one merchant (the hot part):
// plain, hot and spread over as many payees, over three paths.
type Hot struct {
	ApplyBatch HotPath  `json:"apply_batch"` // the payments' credits alone, in ApplyBatch batches
	Transfer   HotPath  `json:"transfer"`    // one-payer transfers, engine.Transfer
	HTTP       HotPath  `json:"http"`        // the same transfers, POST /v1/transfers of the daemon
	Sweep      HotSweep `json:"sweep"`

	Masters int `json:"masters"`
	Lanes   int `json:"lanes"` // of the hot merchant: 2 x the masters
	// LanesPerMaster counts the hot merchant's lanes on each master, in the
	// order of masters_cpu_share (a lane's slot follows from its name);
	// PlainMaster is the index of the plain merchant's master.
	LanesPerMaster []int   `json:"lanes_per_master"`
	PlainMaster    int     `json:"plain_master"`
	Payers         int     `json:"payers"` // and as many payees in the spread phase
	Rounds         int     `json:"rounds"` // of the three phases, alternated, per path
	Seconds        float64 `json:"seconds"`
	BatchSize      int     `json:"batch_size"`
	BatchWorkers   int     `json:"batch_workers"` // goroutines of apply_batch
	Workers        int     `json:"workers"`       // goroutines of transfer, clients of http
	Skipped        string  `json:"skipped,omitempty"`
}

// HotPath is one path's three phases: the merchant plain, hot, and the
// payments spread over the payees.
type HotPath struct {
	Plain           HotPhase `json:"plain"`
	Hot             HotPhase `json:"hot"`
	Spread          HotPhase `json:"spread"`
	HotOverSpread   float64  `json:"hot_over_spread"`   // hot.per_sec / spread.per_sec
	PlainOverSpread float64  `json:"plain_over_spread"` // plain.per_sec / spread.per_sec
	Money           HotMoney `json:"money"`
	Skipped         string   `json:"skipped,omitempty"`
}

// HotPhase is one phase over its rounds.
type HotPhase struct {
	PerSec float64 `json:"per_sec"` // payments applied per second, median over the rounds
	// P50Ms and P99Ms are of a call: an ApplyBatch of batch_size credits on
	// apply_batch, one transfer on the others.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// MastersCPUShare is each master's share of the Redis CPU (INFO's
	// used_cpu_sys + used_cpu_user, before and after each round) over the
	// phase's rounds; MastersCPUMaxOverMin the most a master used over the
	// least; RedisCores the masters' CPU over the phase's time, in cores.
	MastersCPUShare      []float64 `json:"masters_cpu_share"`
	MastersCPUMaxOverMin float64   `json:"masters_cpu_max_over_min"`
	RedisCores           float64   `json:"redis_cores"`
	Rounds               []float64 `json:"rounds_per_sec"`
	Payments             int64     `json:"payments"` // applied, over the rounds
	Errors               int64     `json:"errors"`
	FirstError           string    `json:"first_error,omitempty"`
	// PaidUnits is what the payments answered applied paid (CNY, minor
	// units); ReceivedUnits what the phase's receivers gained by the end of
	// the path (State: the hot merchant's lanes summed).
	PaidUnits     int64 `json:"paid_units"`
	ReceivedUnits int64 `json:"received_units"`
}

// HotMoney is a path's money check: each phase's receivers gained what it
// paid them, and the payers lost what they paid (nothing on apply_batch,
// whose credits have no payer).
type HotMoney struct {
	Exact         bool  `json:"exact"`
	PaidUnits     int64 `json:"paid_units"`
	ReceivedUnits int64 `json:"received_units"`
	DebitedUnits  int64 `json:"debited_units"`
}

// HotSweep is the hot merchant's sweeps, one after each hot phase with
// nothing else running: time and the masters' Redis CPU per lane moved.
// RedisCPUUsecPerLane is INFO's used_cpu over every master, which the
// kernel may count in ticks (a sweep lasts a few ms): ScriptUsecPerLane,
// FCALL's time in commandstats, is the finer figure of the scripts alone.
type HotSweep struct {
	Sweeps              int     `json:"sweeps"`
	LanesMoved          int     `json:"lanes_moved"`
	MsPerLane           float64 `json:"ms_per_lane"`
	RedisCPUUsecPerLane float64 `json:"redis_cpu_usec_per_lane"`
	ScriptUsecPerLane   float64 `json:"script_usec_per_lane"`
	Errors              int     `json:"errors"`
}

// Probe is one rate the relay was tried at.
type Probe struct {
	Offered  float64 `json:"offered_per_sec"`
	Relayed  float64 `json:"relayed_per_sec"`
	LagP99Ms float64 `json:"lag_p99_ms"`
	Seconds  float64 `json:"seconds"`
	Ok       bool    `json:"ok"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs         int      `json:"cpus"`
	GoVersion    string   `json:"go"`
	OS           string   `json:"os"`
	RedisVersion string   `json:"redis"`
	Topology     string   `json:"topology"`
	Settings     Settings `json:"settings"`
	Seconds      float64  `json:"seconds"` // the whole run
	// PartSeconds is how long each part took, setup included.
	PartSeconds map[string]float64 `json:"part_seconds"`
}

// Target is one goal of the design with its figure.
type Target struct {
	Name string  `json:"name"`
	Want string  `json:"want"`
	Got  float64 `json:"got"`
	Met  bool    `json:"met"`
	Note string  `json:"note,omitempty"`
	Skip bool    `json:"skipped,omitempty"`
}

// round keeps figures readable: three significant digits at most below
// 100, whole numbers above.
func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	a := math.Abs(v)
	switch {
	case a >= 100:
		return math.Round(v)
	case a >= 10:
		return math.Round(v*10) / 10
	case a >= 1:
		return math.Round(v*100) / 100
	default:
		return math.Round(v*1000) / 1000
	}
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
