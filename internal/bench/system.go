package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger/pgtest"
)

// The system part measures the whole deployment as a user runs it on one
// box: a Redis Cluster of 3 masters with AOF on (appendfsync everysec),
// engined serve as a process of its own with the relay into a PostgreSQL,
// all started by the part itself, whatever --redis and --pg say (it reads
// every server's CPU from /proc, so they must be its own processes). Keep-
// alive HTTP clients in a closed loop run one workload per phase, and the
// last phase is the floor: the same clients against the seed's deduct
// script behind the least HTTP handler (engined serve --bench-floor). Each
// phase's window runs from its first request until the relay has delivered
// every event the phase wrote, so that the CPU the relay and PostgreSQL
// spend on the phase's events counts for it.

// System workloads, in the order they run.
const (
	phaseDebit      = "debit"       // POST /v1/instructions, one debit
	phaseP2P        = "p2p"         // POST /v1/transfers: debit one holder, credit another
	phaseHoldSettle = "hold_settle" // a freeze, then a transfer settling that hold to another holder: one pair
	phaseCheckout   = "checkout"    // the 4-op checkout
	phaseFloor      = "floor"       // the seed's deduct behind the floor handler
)

var systemPhases = []string{phaseDebit, phaseP2P, phaseHoldSettle, phaseCheckout, phaseFloor}

// Amounts of the system workloads, with what the money check counts.
const (
	sysDebitCNY    = "0.01"
	sysPayCNY      = "1.00"
	sysCheckoutCNY = "80.00" // as checkout
	sysCheckoutPts = 2000    // as checkout
	sysFloorStart  = 1 << 50
	// sysCoupons is how many coupons each holder gets for the checkout
	// phase: with open, two credits and the points, 63 ops of the 64 an
	// instruction may have.
	sysCoupons = 59
)

// errNoCoupons ends a checkout client once every holder's coupons are used.
var errNoCoupons = fmt.Errorf("every holder's %d coupons are used: a longer checkout phase needs more holders", sysCoupons)

// sysRun is the system part's deployment.
type sysRun struct {
	e        *env // the part's own cluster, its client and engine
	d        *daemon
	client   *http.Client
	pg       *pgx.Conn
	holders  []string
	slots    []int // the holders' slots: their outboxes
	redis    []int // redis-server pids
	pgPID    int   // the postmaster
	familyOf func(string) string
	// unfinished counts the transfers answered before all their parts were
	// done (pending, or committed and incomplete).
	unfinished atomic.Int64
}

func runSystem(ctx context.Context, base *env) (System, error) {
	const part = "system"
	s := base.s
	out := System{Clients: s.SystemClients, Holders: s.SystemHolders, Seconds: s.SystemDuration.Seconds(),
		Deployment: "Redis Cluster of 3 masters, no replicas, appendonly yes, appendfsync everysec, notify-keyspace-events Etz; engined serve with the relay into PostgreSQL"}
	if len(base.opt.Daemon) == 0 {
		return out, skipf("no daemon command: run the bench through engined bench")
	}
	total := len(systemPhases) + 2 // the start, idle, the phases
	base.step(part, 0, total, "starting Redis and PostgreSQL")
	var probe *feedProbe
	var hook []string
	if s.SystemWebhook {
		var err error
		if probe, err = newFeedProbe(); err != nil {
			return out, err
		}
		defer probe.close()
		hook = []string{"--webhook", probe.url, "--webhook-secret", webhookSecret}
	}
	r, stop, err := startSystem(ctx, base, hook...)
	if err != nil {
		return out, err
	}
	defer stop()

	put, err := r.openHolders(ctx)
	if err != nil {
		return out, err
	}
	base.step(part, 1, total, "idle")
	if out.Idle, out.IdleSeconds, err = r.idle(ctx, min(s.SystemDuration, 5*time.Second)); err != nil {
		return out, err
	}
	var left moneyOut
	for i, name := range systemPhases {
		base.step(part, 2+i, total, name)
		p, err := r.phase(ctx, name, s.SystemDuration, s.SystemClients, &left)
		if err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		// After every phase, outside its window: the last one is the run's.
		if out.Money, err = r.checkMoney(ctx, put, &left); err != nil {
			return out, err
		}
		p.MoneyExact = out.Money.Exact
		out.Phases = append(out.Phases, p)
	}
	out.Ratios = systemRatios(out.Phases)
	if out.Feed, err = measureFeed(ctx, r.client, r.d.url, probe); err != nil {
		return out, fmt.Errorf("feed: %w", err)
	}
	base.step(part, total, total, "")
	return out, nil
}

// startSystem starts the cluster, PostgreSQL and the daemon; stop stops
// them all.
func startSystem(ctx context.Context, base *env, daemonArgs ...string) (_ *sysRun, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	cl, err := clustertest.Start(sctx, clustertest.Options{Masters: 3,
		// AOF as the deployment has it; the long node timeout as
		// newEnv's, so that a master starved of CPU is not marked failed.
		ExtraConfig: []string{"appendonly yes", "appendfsync everysec", "cluster-node-timeout 30000", "notify-keyspace-events Etz"}})
	cancel()
	if err != nil {
		return nil, stop, fmt.Errorf("start redis: %w", err)
	}
	stops = append(stops, func() { _ = cl.Stop() })
	e := &env{opt: base.opt, s: base.s, cl: cl, addrs: cl.Addrs(), cluster: true, prefix: base.prefix + "-sys", log: base.log}
	// The part's own servers take no credentials of the --redis ones.
	e.opt.Username, e.opt.Password, e.opt.TLS = "", "", nil
	e.rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: e.addrs, ContextTimeoutEnabled: true, PoolSize: 32,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	stops = append(stops, func() { _ = e.rdb.Close() })
	e.eng = engine.New(e.rdb, nil)
	if err := e.eng.Load(ctx); err != nil {
		return nil, stop, err
	}
	r := &sysRun{e: e, familyOf: commandFamilies()}
	err = e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return err
		}
		pid, err := strconv.Atoi(cluster.InfoField(info, "process_id"))
		r.redis = append(r.redis, pid)
		return err
	})
	if err != nil {
		return nil, stop, err
	}

	pg, err := pgtest.StartDurable(ctx)
	if err != nil {
		return nil, stop, skipf("no PostgreSQL: %v", err)
	}
	stops = append(stops, func() { _ = pg.Close() })
	if r.pg, err = pgx.Connect(ctx, pg.DSN); err != nil {
		return nil, stop, err
	}
	stops = append(stops, func() { _ = r.pg.Close(context.Background()) })
	var backend int
	if err := r.pg.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil, stop, err
	}
	if r.pgPID, err = parentOf(backend); err != nil {
		return nil, stop, err
	}

	if r.d, err = startDaemon(ctx, e, append([]string{"--pg", pg.DSN, "--bench-floor"}, daemonArgs...)...); err != nil {
		return nil, stop, err
	}
	stops = append(stops, r.d.stop)
	tr := &http.Transport{MaxIdleConns: 2 * e.s.SystemClients, MaxIdleConnsPerHost: 2 * e.s.SystemClients,
		MaxConnsPerHost: e.s.SystemClients, IdleConnTimeout: time.Minute}
	stops = append(stops, tr.CloseIdleConnections)
	r.client = &http.Client{Transport: tr, Timeout: 15 * time.Second}
	return r, stop, nil
}

// openHolders opens the holders with plenty of everything the workloads
// take, and fills their floor keys; it returns what was put in, per asset
// in minor units ("points" for points).
func (r *sysRun) openHolders(ctx context.Context) (map[string]int64, error) {
	e := r.e
	r.holders = e.holderIDs("h", e.s.SystemHolders)
	slots := map[int]bool{}
	ins := make([]instructions.Instruction, len(r.holders))
	exp := time.Now().Add(30 * 24 * time.Hour)
	for i, h := range r.holders {
		in := instructions.New("open", h).Open().Credit("CNY", richCNY).Credit("USDT", richUSDT).EarnPoints(richPoints)
		for c := range sysCoupons {
			in = in.GrantCoupon("c-"+strconv.Itoa(c), exp)
		}
		ins[i] = in
		slots[cluster.HolderSlot(h)] = true
	}
	if err := e.applyAll(ctx, ins); err != nil {
		return nil, err
	}
	for s := range slots {
		r.slots = append(r.slots, s)
	}
	pipe := e.rdb.Pipeline()
	for _, h := range r.holders {
		pipe.Set(ctx, FloorKey(h), sysFloorStart, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	n := int64(len(r.holders))
	put := map[string]int64{}
	for asset, amount := range map[string]string{"CNY": richCNY, "USDT": richUSDT} {
		u, err := r.units(asset, amount)
		if err != nil {
			return nil, err
		}
		put[asset] = n * u
	}
	pts, _ := strconv.ParseInt(richPoints, 10, 64)
	put["points"] = n * pts
	// The relay delivers the opening events before the first phase starts.
	if _, err := r.drain(ctx); err != nil {
		return nil, err
	}
	return put, nil
}

// idle measures the deployment with no load for d: what the background
// work (sweeper, recovery worker, relay) costs, in cores.
func (r *sysRun) idle(ctx context.Context, d time.Duration) (ProcCPU, float64, error) {
	a, err := r.sample(ctx)
	if err != nil {
		return ProcCPU{}, 0, err
	}
	select {
	case <-ctx.Done():
		return ProcCPU{}, 0, ctx.Err()
	case <-time.After(d):
	}
	b, err := r.sample(ctx)
	if err != nil {
		return ProcCPU{}, 0, err
	}
	w := b.at.Sub(a.at).Seconds()
	cores := func(d time.Duration) float64 { return round(d.Seconds() / w) }
	daemon, rds, pg := b.daemon-a.daemon, b.redis-a.redis, b.postgres-a.postgres
	return ProcCPU{Daemon: cores(daemon), Redis: cores(rds), Postgres: cores(pg), All: cores(daemon + rds + pg)}, round(w), nil
}

// units reads a decimal amount of asset in minor units.
func (r *sysRun) units(asset, amount string) (int64, error) {
	scale, ok := r.e.eng.Assets().Scale(asset)
	if !ok {
		return 0, fmt.Errorf("unknown asset %s", asset)
	}
	u, ok := instructions.ToUnits(amount, scale)
	if !ok {
		return 0, fmt.Errorf("amount %s of %s", amount, asset)
	}
	return u, nil
}

// moneyOut counts what the workloads took out of the holders for good,
// from the instructions answered applied; uncertain counts those whose
// outcome the client cannot know (no answer, or a server error).
type moneyOut struct {
	debits, checkouts atomic.Int64
	uncertain         atomic.Int64
}

// phase runs one workload for d on n clients and measures it.
func (r *sysRun) phase(ctx context.Context, name string, d time.Duration, n int, left *moneyOut) (SystemPhase, error) {
	out := SystemPhase{Name: name}
	op, err := r.workload(name, left)
	if err != nil {
		return out, err
	}
	before, err := r.sample(ctx)
	if err != nil {
		return out, err
	}
	var seq, ok, failed atomic.Int64
	var ec errCount
	lats := make([][]float64, n)
	var stop atomic.Bool
	var wg sync.WaitGroup
	// The relay's own lag gauge (the age of the oldest undelivered event,
	// measured by the relay every 2 s), read once a second: a scrape costs
	// the daemon a little, and the gauge changes no faster.
	var lagMax atomic.Int64
	wg.Go(func() {
		for !stop.Load() && ctx.Err() == nil {
			if v, err := r.d.metric(ctx, "atomledger_relay_lag_ms"); err == nil && int64(v) > lagMax.Load() {
				lagMax.Store(int64(v))
			}
			for i := 0; i < 20 && !stop.Load(); i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	start := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	for c := range n {
		wg.Go(func() {
			for !stop.Load() && ctx.Err() == nil {
				k := seq.Add(1) - 1
				t := time.Now()
				err := op(ctx, k)
				if errors.Is(err, errNoCoupons) {
					return
				}
				if err != nil {
					failed.Add(1)
					ec.add(err)
					continue
				}
				lats[c] = append(lats[c], float64(time.Since(t))/float64(time.Millisecond))
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	timer.Stop()
	took := time.Since(start)
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.Ops, out.Errors, out.RelayLagMaxMs = ok.Load(), failed.Load(), float64(lagMax.Load())
	if _, first := ec.result(); first != nil {
		out.FirstError = first.Error()
	}
	if out.Ops == 0 {
		return out, fmt.Errorf("no operation succeeded, first error: %s", out.FirstError)
	}
	out.Seconds = round(took.Seconds())
	out.PerSec = round(float64(out.Ops) / took.Seconds())
	all := slices.Concat(lats...)
	slices.Sort(all)
	out.P50Ms, out.P99Ms = round(percentile(all, 50)), round(percentile(all, 99))

	drained, err := r.drain(ctx)
	if err != nil {
		return out, err
	}
	out.DrainSeconds = round(drained.Seconds())
	after, err := r.sample(ctx)
	if err != nil {
		return out, err
	}
	out.Window = round(after.at.Sub(before.at).Seconds())
	r.costs(&out, before, after)

	// Then half the rate, open loop, for a third of the phase, outside the
	// window: latency, and how busy the box is.
	if out.HalfLoad, err = halfLoad(ctx, op, &seq, float64(out.Ops)/took.Seconds()/2, d/3, n); err != nil {
		return out, err
	}
	if h := &out.HalfLoad; h.Ops > 0 {
		end, err := r.sample(ctx)
		if err != nil {
			return out, err
		}
		h.CPUPer1000, h.Cores = procCPU(after, end, h.Ops)
	}
	_, err = r.drain(ctx)
	return out, err
}

// drain waits until the outboxes of the holders' slots are empty: the
// relay has written every event to PostgreSQL and deleted it. It returns
// how long that took.
func (r *sysRun) drain(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for {
		pipe := r.e.rdb.Pipeline()
		lens := make([]*redis.IntCmd, len(r.slots))
		for i, s := range r.slots {
			lens[i] = pipe.XLen(ctx, cluster.Outbox(s))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return 0, fmt.Errorf("read the outboxes: %w", err)
		}
		var backlog int64
		for _, l := range lens {
			backlog += l.Val()
		}
		if backlog == 0 {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the relay left %d events in the outboxes for %s", backlog, time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkMoney reads every holder's state through the engine and checks, per
// asset, that what the holders have (available and frozen) plus what left
// them is what was put in.
func (r *sysRun) checkMoney(ctx context.Context, put map[string]int64, left *moneyOut) (MoneyCheck, error) {
	// A transfer answered unfinished is finished by the recovery worker
	// within the transfer timeout (30 s by default): till then the sums
	// may be off by its parts, so the check is read again for a while.
	deadline := time.Now().Add(time.Minute)
	for {
		m, err := r.readMoney(ctx, put, left)
		if err != nil || m.Exact || r.unfinished.Load() == 0 || time.Now().After(deadline) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// readMoney reads the holders once and compares.
func (r *sysRun) readMoney(ctx context.Context, put map[string]int64, left *moneyOut) (MoneyCheck, error) {
	snaps, err := r.e.eng.Snapshots(ctx, r.holders)
	if err != nil {
		return MoneyCheck{}, err
	}
	if len(snaps) != len(r.holders) {
		return MoneyCheck{}, fmt.Errorf("money check: %d of %d holders found", len(snaps), len(r.holders))
	}
	debit, err := r.units("CNY", sysDebitCNY)
	if err != nil {
		return MoneyCheck{}, err
	}
	checkout, err := r.units("CNY", sysCheckoutCNY)
	if err != nil {
		return MoneyCheck{}, err
	}
	out := map[string]int64{
		"CNY":    left.debits.Load()*debit + left.checkouts.Load()*checkout,
		"USDT":   0, // the checkout freezes it: still the holder's
		"points": left.checkouts.Load() * sysCheckoutPts,
	}
	return moneyCheck(put, out, slices.Collect(maps.Values(snaps)), left.uncertain.Load()), nil
}
