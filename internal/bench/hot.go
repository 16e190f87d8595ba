package bench

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The hot part pays one merchant from HotPayers payers (docs/hot-holders.md)
// in three phases side by side: the merchant a plain holder (plain), a hot
// one of 2 x the masters lanes (hot), and the same payments spread over as
// many payees as payers (spread). It does so over three paths, one after
// the other:
//
//   - apply_batch: the payments' credits alone, ApplyBatch batches of
//     BatchSize from BatchWorkers goroutines (the payers are not debited);
//   - transfer: one-payer transfers (debit the payer, credit the merchant)
//     through engine.Transfer from Workers goroutines;
//   - http: the same transfers posted to POST /v1/transfers of the daemon
//     (engined serve --dev, its hot sweeper idle: --hot-sweep 1h) by Workers keep-alive
//     clients.
//
// Each path runs HotRounds rounds of its three phases, the order reversed
// every other round, HotDur each. Every master's used_cpu_sys +
// used_cpu_user (INFO cpu) is read before and after each phase: each
// master's share of the Redis CPU shows where the merchant's credits ran.
// After each hot phase the bench sweeps the hot merchant (engine.SweepHot)
// with nothing else running, and times it. After each path the money is
// checked: what each receiver gained (State, the hot merchant's lanes
// summed) is what was paid to it, and the payers lost what they paid.

// Names of the hot part's phases and paths.
const (
	hotPlain  = "plain"
	hotHot    = "hot"
	hotSpread = "spread"

	hotPathBatch    = "apply_batch"
	hotPathTransfer = "transfer"
	hotPathHTTP     = "http"

	hotPay = "1.00" // CNY per payment
)

var hotPhases = []string{hotPlain, hotHot, hotSpread}

// hotRun is the hot part's holders and what it adds up across paths.
type hotRun struct {
	e              *env
	payers, payees []string
	plain, hot     string
	masters        []string // addresses, in eachMaster's order
	all            *loadSet // every holder and lane: their outboxes are dropped between phases
	seq            atomic.Int64
	payUnits       int64
	sweep          sweepSum
}

// sweepSum adds up the sweeps of the hot merchant.
type sweepSum struct {
	sweeps, moved, errs int
	took                time.Duration
	cpuSec              float64
	scriptUsec          int64 // FCALL's usec (commandstats), the scripts' own time
}

// hotOp makes one call of a path (a batch, or one payment) paying the k-th
// payments to to(k); it answers how many payments applied and how many
// failed, with the first failure.
type hotOp func(to func(k int64) string) (ok, failed int64, err error)

func runHot(ctx context.Context, e *env) (Hot, error) {
	const part = "hot"
	s := e.s
	out := Hot{Payers: s.HotPayers, Rounds: s.HotRounds, Seconds: s.HotDur.Seconds(), BatchSize: s.BatchSize,
		BatchWorkers: s.BatchWorkers, Workers: s.Workers}
	h := &hotRun{e: e}
	err := e.eachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		h.masters = append(h.masters, c.Options().Addr)
		return nil
	})
	if err != nil {
		return out, err
	}
	out.Masters = len(h.masters)
	out.Lanes = min(max(2*len(h.masters), 2), instructions.MaxLanes)
	total := 3*s.HotRounds + 1
	e.step(part, 0, total, "opening holders")
	if err := h.open(ctx, out.Lanes); err != nil {
		return out, err
	}
	if out.LanesPerMaster, out.PlainMaster, err = h.placement(ctx, out.Lanes); err != nil {
		return out, err
	}
	done := 0
	progress := func(path string) {
		done++
		e.step(part, done, total, path)
	}
	// Every call runs to its end with a context of its own: one cut short
	// would leave a transfer pending and the sums off.
	bg := context.WithoutCancel(ctx)
	if out.ApplyBatch, err = h.path(ctx, hotPathBatch, s.BatchWorkers, h.batchOp(bg), progress); err != nil {
		return out, fmt.Errorf("%s: %w", hotPathBatch, err)
	}
	pay := func(t instructions.Transfer) error {
		st, err := e.eng.Transfer(bg, t)
		if err == nil && (st.Status != engine.TransferCommitted || !st.Complete) {
			err = fmt.Errorf("transfer %s: %s, complete %v, error %v", st.ID, st.Status, st.Complete, st.Error)
		}
		return err
	}
	if out.Transfer, err = h.path(ctx, hotPathTransfer, s.Workers, h.transferOp(hotPathTransfer, pay), progress); err != nil {
		return out, fmt.Errorf("%s: %w", hotPathTransfer, err)
	}
	if out.HTTP, err = h.httpPath(ctx, progress); err != nil {
		return out, fmt.Errorf("%s: %w", hotPathHTTP, err)
	}
	sw := h.sweep
	out.Sweep = HotSweep{Sweeps: sw.sweeps, LanesMoved: sw.moved, Errors: sw.errs}
	if sw.moved > 0 {
		out.Sweep.MsPerLane = round(sw.took.Seconds() * 1000 / float64(sw.moved))
		out.Sweep.RedisCPUUsecPerLane = round(sw.cpuSec * 1e6 / float64(sw.moved))
		out.Sweep.ScriptUsecPerLane = round(float64(sw.scriptUsec) / float64(sw.moved))
	}
	e.step(part, total, total, "")
	return out, nil
}

// open opens the payers (rich), the payees and the two merchants, the hot
// one with lanes lanes.
func (h *hotRun) open(ctx context.Context, lanes int) error {
	e := h.e
	n := e.s.HotPayers
	h.payers, h.payees = e.holderIDs("hot-payer", n), e.holderIDs("hot-payee", n)
	h.plain, h.hot = e.prefix+"-merchant-plain", e.prefix+"-merchant-hot"
	ins := make([]instructions.Instruction, 0, 2*n+1)
	for i := range n {
		ins = append(ins, instructions.New("open", h.payers[i]).Open().Credit("CNY", richCNY), instructions.New("open", h.payees[i]).Open())
	}
	ins = append(ins, instructions.New("open", h.plain).Open())
	if err := e.applyAll(ctx, ins); err != nil {
		return err
	}
	if _, err := e.eng.Apply(ctx, instructions.New("open", h.hot).OpenHot(lanes)); err != nil {
		return fmt.Errorf("open the hot merchant: %w", err)
	}
	scale, _ := e.eng.Assets().Scale("CNY")
	h.payUnits, _ = instructions.ToUnits(hotPay, scale)
	h.all = &loadSet{holders: slices.Concat(h.payers, h.payees, []string{h.plain})}
	for i := range lanes {
		h.all.holders = append(h.all.holders, instructions.LaneHolder(h.hot, i))
	}
	return nil
}

// placement counts the hot merchant's lanes on each master (their slots
// follow from their names, nothing places them) and finds the plain
// merchant's master, as indexes of h.masters.
func (h *hotRun) placement(ctx context.Context, lanes int) ([]int, int, error) {
	masterOf, err := h.e.slotMasters(ctx)
	if err != nil {
		return nil, 0, err
	}
	index := func(holder string) int {
		addr := masterOf(cluster.HolderSlot(holder))
		if i := slices.Index(h.masters, addr); i >= 0 {
			return i
		}
		return 0 // one server: its only master
	}
	per := make([]int, len(h.masters))
	for i := range lanes {
		per[index(instructions.LaneHolder(h.hot, i))]++
	}
	return per, index(h.plain), nil
}

// to is the receiver of the k-th payment in a phase.
func (h *hotRun) to(phase string) func(int64) string {
	switch phase {
	case hotPlain:
		return func(int64) string { return h.plain }
	case hotHot:
		return func(int64) string { return h.hot }
	}
	return func(k int64) string { return h.payees[k%int64(len(h.payees))] }
}

func (h *hotRun) payer(k int64) string { return h.payers[k%int64(len(h.payers))] }

func (h *hotRun) id(path string, k int64) string {
	return h.e.prefix + "-hot-" + path + "-" + strconv.FormatInt(k, 10)
}

// batchOp credits BatchSize payments in one ApplyBatch.
func (h *hotRun) batchOp(ctx context.Context) hotOp {
	bs := int64(h.e.s.BatchSize)
	return func(to func(int64) string) (ok, failed int64, first error) {
		k0 := h.seq.Add(bs) - bs
		ins := make([]instructions.Instruction, bs)
		for i := range ins {
			k := k0 + int64(i)
			ins[i] = instructions.New(h.id(hotPathBatch, k), to(k)).Credit("CNY", hotPay)
		}
		for _, o := range h.e.eng.ApplyBatch(ctx, ins) {
			if o.Err != nil {
				failed++
				first = cmp.Or(first, o.Err)
				continue
			}
			ok++
		}
		return ok, failed, first
	}
}

// transferOp pays one payment by a one-payer transfer, through pay.
func (h *hotRun) transferOp(path string, pay func(instructions.Transfer) error) hotOp {
	return func(to func(int64) string) (int64, int64, error) {
		k := h.seq.Add(1) - 1
		var from, into instructions.Instruction
		err := pay(instructions.Transfer{ID: h.id(path, k), Parts: []instructions.Part{
			{Holder: h.payer(k), Ops: from.Debit("CNY", hotPay).Ops},
			{Holder: to(k), Ops: into.Credit("CNY", hotPay).Ops},
		}})
		if err != nil {
			return 0, 1, err
		}
		return 1, 0, nil
	}
}

// httpPath runs the transfer path through the daemon, which it starts with
// its hot sweeper off (the bench sweeps, and times it); skipped without a
// daemon command.
func (h *hotRun) httpPath(ctx context.Context, progress func(string)) (HotPath, error) {
	e := h.e
	if len(e.opt.Daemon) == 0 {
		for range e.s.HotRounds {
			progress(hotPathHTTP)
		}
		return HotPath{Skipped: "no daemon command: run the bench through engined bench"}, nil
	}
	// An hour is off for the part: serve refuses "0" (at least 1ms), though
	// its usage says 0 turns the sweep off.
	d, err := startDaemon(ctx, e, "--hot-sweep", "1h")
	if err != nil {
		return HotPath{}, err
	}
	defer d.stop()
	tr := &http.Transport{MaxIdleConns: 2 * e.s.Workers, MaxIdleConnsPerHost: 2 * e.s.Workers, MaxConnsPerHost: e.s.Workers,
		IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	r := &sysRun{e: e, d: d, client: &http.Client{Transport: tr, Timeout: 15 * time.Second}}
	bg := context.WithoutCancel(ctx)
	pay := func(t instructions.Transfer) error { return r.postTransfer(bg, t) }
	return h.path(ctx, hotPathHTTP, e.s.Workers, h.transferOp(hotPathHTTP, pay), progress)
}

// hotAcc adds up one phase's rounds.
type hotAcc struct {
	rates, lat  []float64
	cpu         []float64 // seconds, per master
	took        time.Duration
	ok, failed  int64
	first       error
	paid, recvd int64
}

// path runs HotRounds rounds of the three phases of op on workers, sweeps
// the hot merchant after each hot phase, and checks the money.
func (h *hotRun) path(ctx context.Context, name string, workers int, op hotOp, progress func(string)) (HotPath, error) {
	e := h.e
	receivers := map[string][]string{hotPlain: {h.plain}, hotHot: {h.hot}, hotSpread: h.payees}
	before, err := h.cny(ctx, receivers)
	if err != nil {
		return HotPath{}, err
	}
	acc := map[string]*hotAcc{}
	for _, p := range hotPhases {
		acc[p] = &hotAcc{cpu: make([]float64, len(h.masters))}
	}
	for r := range e.s.HotRounds {
		order := slices.Clone(hotPhases)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, p := range order {
			if err := h.phase(ctx, workers, op, h.to(p), acc[p]); err != nil {
				return HotPath{}, fmt.Errorf("%s phase: %w", p, err)
			}
			if p == hotHot {
				if err := h.sweepHot(ctx); err != nil {
					return HotPath{}, err
				}
			}
		}
		progress(name)
	}
	after, err := h.cny(ctx, receivers)
	if err != nil {
		return HotPath{}, err
	}
	out := HotPath{Money: HotMoney{Exact: true}}
	var paid int64
	for _, p := range hotPhases {
		a := acc[p]
		a.paid, a.recvd = a.ok*h.payUnits, after[p]-before[p]
		paid += a.paid
		out.Money.PaidUnits += a.paid
		out.Money.ReceivedUnits += a.recvd
		out.Money.Exact = out.Money.Exact && a.paid == a.recvd
	}
	out.Money.DebitedUnits = before["payers"] - after["payers"]
	want := paid
	if name == hotPathBatch {
		want = 0 // credits alone
	}
	out.Money.Exact = out.Money.Exact && out.Money.DebitedUnits == want
	out.Plain, out.Hot, out.Spread = acc[hotPlain].phase(), acc[hotHot].phase(), acc[hotSpread].phase()
	out.HotOverSpread = round(ratio(out.Hot.PerSec, out.Spread.PerSec))
	out.PlainOverSpread = round(ratio(out.Plain.PerSec, out.Spread.PerSec))
	return out, nil
}

// phase runs op on workers for HotDur and adds the round to a.
func (h *hotRun) phase(ctx context.Context, workers int, op hotOp, to func(int64) string, a *hotAcc) error {
	e := h.e
	if err := e.dropOutboxes(ctx, h.all); err != nil {
		return err
	}
	before, err := e.mastersCPU(ctx)
	if err != nil {
		return err
	}
	var ok, failed atomic.Int64
	var ec errCount
	lats := make([][]float64, workers)
	took := hammer(workers, e.s.HotDur, func(w int) {
		start := time.Now()
		n, bad, err := op(to)
		lats[w] = append(lats[w], float64(time.Since(start))/float64(time.Millisecond))
		ok.Add(n)
		failed.Add(bad)
		ec.add(err)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	after, err := e.mastersCPU(ctx)
	if err != nil {
		return err
	}
	if ok.Load() == 0 {
		_, first := ec.result()
		return fmt.Errorf("no payment applied, first error: %w", first)
	}
	for i, m := range h.masters {
		a.cpu[i] += after[m] - before[m]
	}
	a.rates = append(a.rates, float64(ok.Load())/took.Seconds())
	a.lat = append(a.lat, slices.Concat(lats...)...)
	a.took += took
	a.ok += ok.Load()
	a.failed += failed.Load()
	if _, first := ec.result(); a.first == nil {
		a.first = first
	}
	return nil
}

// phase gives the figures of the rounds added up in a.
func (a *hotAcc) phase() HotPhase {
	out := HotPhase{PerSec: round(median(a.rates)), Payments: a.ok, Errors: a.failed, PaidUnits: a.paid, ReceivedUnits: a.recvd}
	for _, r := range a.rates {
		out.Rounds = append(out.Rounds, round(r))
	}
	if a.first != nil {
		out.FirstError = a.first.Error()
	}
	slices.Sort(a.lat)
	out.P50Ms, out.P99Ms = round(percentile(a.lat, 50)), round(percentile(a.lat, 99))
	var sum float64
	for _, c := range a.cpu {
		sum += c
	}
	for _, c := range a.cpu {
		out.MastersCPUShare = append(out.MastersCPUShare, round(ratio(c, sum)))
	}
	if len(a.cpu) > 0 {
		out.MastersCPUMaxOverMin = round(ratio(slices.Max(a.cpu), slices.Min(a.cpu)))
	}
	out.RedisCores = round(ratio(sum, a.took.Seconds()))
	return out
}

// sweepHot sweeps the hot merchant once, with nothing else running, and
// adds its time and the masters' CPU to h.sweep.
func (h *hotRun) sweepHot(ctx context.Context) error {
	e := h.e
	// INFO commandstats outside the CPU's window: it costs the servers more
	// than INFO cpu.
	cmdBefore, err := e.commandStats(ctx)
	if err != nil {
		return err
	}
	before, err := e.mastersCPU(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	got, serr := e.eng.SweepHot(ctx, h.hot)
	took := time.Since(start)
	after, err := e.mastersCPU(ctx)
	if err != nil {
		return err
	}
	cmdAfter, err := e.commandStats(ctx)
	if err != nil {
		return err
	}
	h.sweep.scriptUsec += cmdAfter["fcall"].Usec - cmdBefore["fcall"].Usec
	h.sweep.sweeps++
	h.sweep.moved += got.Moved
	h.sweep.took += took
	for _, m := range h.masters {
		h.sweep.cpuSec += after[m] - before[m]
	}
	if serr != nil {
		h.sweep.errs++
		fmt.Fprintf(e.log, "hot: sweep of %s: %v\n", h.hot, serr)
	}
	return nil
}

// cny reads the CNY (available and frozen, minor units) of each phase's
// receivers and of the payers ("payers").
func (h *hotRun) cny(ctx context.Context, receivers map[string][]string) (map[string]int64, error) {
	out := map[string]int64{}
	groups := map[string][]string{"payers": h.payers}
	for p, hs := range receivers {
		groups[p] = hs
	}
	for name, hs := range groups {
		sum, err := h.e.sums(ctx, hs)
		if err != nil {
			return nil, err
		}
		out[name] = sum["CNY"]
	}
	return out, nil
}

// mastersCPU reads each master's used_cpu_sys + used_cpu_user (INFO cpu),
// in seconds, by address.
func (e *env) mastersCPU(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	err := e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "cpu").Result()
		if err != nil {
			return err
		}
		out[c.Options().Addr], err = usedCPU(info)
		return err
	})
	return out, err
}

// usedCPU reads used_cpu_sys + used_cpu_user, in seconds, from INFO cpu.
func usedCPU(info string) (float64, error) {
	var sum float64
	for _, f := range []string{"used_cpu_sys", "used_cpu_user"} {
		v, err := strconv.ParseFloat(cluster.InfoField(info, f), 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu %s: %w", f, err)
		}
		sum += v
	}
	return sum, nil
}
