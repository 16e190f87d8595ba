package bench

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

func TestProcStat_ReadsParentAndCPUAfterTheName(t *testing.T) {
	// A name with spaces and parentheses, as a process may choose one.
	line := "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 500 0 0 0 250 75 40 2 20 0 1 0 100 1000 10 18446744073709551615\n"
	ppid, cpu, reaped, err := procStat(line)
	require.NoError(t, err)
	assert.Equal(t, 17, ppid)
	assert.Equal(t, 3250*time.Millisecond, cpu, "utime 250 + stime 75 ticks of 1/100 s")
	assert.Equal(t, 420*time.Millisecond, reaped, "cutime 40 + cstime 2")

	for _, bad := range []string{"", "4242 no name", "4242 (x) S 1 2 3",
		"4242 (x) S one 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		"4242 (x) S 1 2 3 4 5 6 7 8 9 10 eleven 12 13 14 15 16"} {
		_, _, _, err := procStat(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestReadProc_SelfAndTheTreeOfAParent(t *testing.T) {
	ppid, _, _, err := readProc("self")
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), ppid)

	// A child that burns a little CPU, then waits to be killed: the tree of
	// this process counts it.
	child := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 60")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	var childCPU time.Duration
	require.Eventually(t, func() bool {
		_, childCPU, _, err = readProc(strconv.Itoa(child.Process.Pid))
		return err == nil && childCPU > 0
	}, 60*time.Second, 20*time.Millisecond, "the child's CPU shows in /proc")
	_, self, reaped, err := readProc("self")
	require.NoError(t, err)
	tree, err := treeCPU(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, tree, self+reaped+childCPU, "the tree holds this process and its child")
	parent, err := parentOf(child.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), parent)

	// Once the child has exited and been waited for, its time stays in the
	// tree, as the parent's children's time.
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	after, err := treeCPU(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, after, tree, "an exited child takes nothing away")
	_, _, reapedAfter, err := readProc("self")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, reapedAfter, reaped+childCPU)
}

func TestCommandFamilies_ScriptsKeepTheCommandsTheyCall(t *testing.T) {
	family := commandFamilies()
	for name, want := range map[string]string{
		"fcall": famScript, "evalsha": famScript,
		"xrange": famRead, "xtrim": famRemove, "xreadgroup": famRead, "xack": famRemove, "xdel": famRemove, "wait": famWait,
		"client|tracking": famTracking, "client|setname": famTracking, "zrangebyscore": famRecovery,
		"info": famOther, "xlen": famOther, "cluster|slots": famOther,
		// Called by the library or the seed's deduct: counted in fcall.
		"hset": "", "xadd": "", "hmget": "", "set": "", "decrby": "", "get": "",
	} {
		assert.Equal(t, want, family(name), name)
	}
}

func TestSplitCommands_PerFamilyAndWhatIsOutside(t *testing.T) {
	delta := map[string]cmdStat{
		"fcall":      {Calls: 100, Usec: 5000},
		"hset":       {Calls: 400, Usec: 900}, // inside the fcalls: not again
		"xreadgroup": {Calls: 10, Usec: 300},
		"xack":       {Calls: 10, Usec: 100},
		"xdel":       {Calls: 10, Usec: 100},
		"info":       {Calls: 2, Usec: 50},
	}
	usec, calls := splitCommands(delta, 0.008, 100, commandFamilies())
	assert.Equal(t, map[string]float64{
		famScript: 50000, famRead: 3000, famRemove: 2000, famOther: 500,
		famOutside: 24500, // 8,000 µs of CPU, 5,550 of them in commands, per 100 operations
		famUsedCPU: 80000,
	}, usec)
	assert.Equal(t, map[string]float64{famScript: 1, famRead: 0.1, famRemove: 0.2, famOther: 0.02}, calls)
}

func TestMoneyCheck_HeldPlusLeftIsWhatWasPutIn(t *testing.T) {
	snaps := []*stored.Snapshot{
		{Holder: "a", Balances: map[string][2]int64{"CNY": {700, 100}, "USDT": {50, 50}}, Points: &[2]int64{10, 0}},
		{Holder: "b", Balances: map[string][2]int64{"CNY": {150, 0}}},
	}
	put := map[string]int64{"CNY": 1000, "USDT": 100, "points": 30}
	m := moneyCheck(put, map[string]int64{"CNY": 50, "points": 20}, snaps, 0)
	assert.True(t, m.Exact)
	assert.Equal(t, 2, m.Holders)
	assert.Equal(t, []AssetSum{
		{Asset: "CNY", PutIn: 1000, Held: 950, LeftOut: 50},
		{Asset: "USDT", PutIn: 100, Held: 100},
		{Asset: "points", PutIn: 30, Held: 10, LeftOut: 20},
	}, m.Assets)

	// One minor unit missing, and an asset nobody put in.
	snaps[1].Balances["BTC"] = [2]int64{1, 0}
	m = moneyCheck(put, map[string]int64{"CNY": 49, "points": 20}, snaps, 3)
	assert.False(t, m.Exact)
	assert.Equal(t, int64(3), m.Uncertain)
	assert.Equal(t, []AssetSum{
		{Asset: "BTC", Held: 1, Diff: 1},
		{Asset: "CNY", PutIn: 1000, Held: 950, LeftOut: 49, Diff: -1},
		{Asset: "USDT", PutIn: 100, Held: 100},
		{Asset: "points", PutIn: 30, Held: 10, LeftOut: 20},
	}, m.Assets)
}

func TestSystemRatiosAndTargets(t *testing.T) {
	s := System{Phases: []SystemPhase{
		{Name: phaseDebit, PerSec: 1000, Ops: 10000, DrainSeconds: 0.5, CPUPer1000: ProcCPU{All: 0.1}, RedisUsedCPUPer1000: 0.2, HalfLoad: HalfLoad{P99Ms: 4}},
		{Name: phaseP2P, PerSec: 700, Ops: 7000, PGBytesPerOp: 4000, PGWALPerOp: 1400, RedisUsedCPUPer1000: 0.45, HalfLoad: HalfLoad{P99Ms: 4.5}},
		{Name: phaseHoldSettle, PerSec: 300, Ops: 3000, HalfLoad: HalfLoad{P99Ms: 5}},
		{Name: phaseCheckout, PerSec: 800, Ops: 8000, HalfLoad: HalfLoad{P99Ms: 3}},
		{Name: phaseFloor, PerSec: 4000, Ops: 40000, RedisUsedCPUPer1000: 0.08, HalfLoad: HalfLoad{P99Ms: 19}}, // the floor's is no workload's
	}, Money: MoneyCheck{Exact: true, Holders: 10}, Idle: ProcCPU{Daemon: 0.01, Redis: 0.005}, IdleSeconds: 5}
	s.Ratios = systemRatios(s.Phases)
	assert.Equal(t, map[string]float64{phaseDebit: 0.25, phaseP2P: 0.175, phaseHoldSettle: 0.075, phaseCheckout: 0.2}, s.Ratios.ToFloor)
	assert.Equal(t, 0.7, s.Ratios.P2POverDebit)
	assert.Equal(t, 0.3, s.Ratios.HoldSettleOverDebit)

	met := map[string]bool{}
	skipped := 0
	for _, tg := range systemTargets(s) {
		met[tg.Name] = tg.Met
		if tg.Skip {
			skipped++
		}
	}
	assert.Equal(t, 1, skipped, "reconcile is not measured here")
	assert.True(t, met["system p99_ms of each workload at half its rate, open loop (the worst)"])
	assert.False(t, met["system.debit per_sec / floor per_sec"])
	assert.True(t, met["system.p2p per_sec / debit per_sec"])
	assert.False(t, met["system.hold_settle pairs / debit per_sec"])
	assert.True(t, met["system.debit Redis CPU per op / floor's"], "0.2 over 0.08")
	assert.False(t, met["system.p2p Redis CPU per op / debit's"], "0.45 over 0.2")
	assert.True(t, met["system.debit drain_s: the relay's backlog gone after the phase"])
	assert.True(t, met["system.debit relay_lag_max_ms under full load"])
	assert.True(t, met["system.debit cpu_s_per_1000.all"])
	assert.False(t, met["system.p2p pg_bytes_per_op"])
	assert.True(t, met["system.p2p pg_wal_bytes_per_op"])
	assert.True(t, met["system idle cores, daemon + redis"])
	assert.True(t, met["system.money exact"])

	s.Phases[2].HalfLoad.P99Ms = 10.1
	for _, tg := range systemTargets(s) {
		if strings.HasPrefix(tg.Name, "system p99_ms") {
			assert.False(t, tg.Met, "one workload over 10 ms")
			assert.Equal(t, 10.1, tg.Got)
		}
	}

	for _, tg := range systemTargets(System{Skipped: "not asked for"}) {
		assert.True(t, tg.Skip, tg.Name)
		assert.False(t, tg.Met, tg.Name)
	}
}

func TestMetricValue_FindsTheSampleWithoutLabels(t *testing.T) {
	text := "# HELP atomledger_relay_events_total Events.\n# TYPE atomledger_relay_events_total counter\n" +
		"atomledger_relay_events_total_x 5\natomledger_relay_events_total 1234\natomledger_other{a=\"b\"} 7\n"
	v, err := metricValue(text, "atomledger_relay_events_total")
	require.NoError(t, err)
	assert.Equal(t, 1234.0, v)
	_, err = metricValue(text, "atomledger_missing")
	assert.Error(t, err)
}

// TestSystem_SkippedWithoutADaemon: the part needs engined serve as a
// process of its own; without the command it says so and starts nothing.
func TestSystem_SkippedWithoutADaemon(t *testing.T) {
	e := &env{s: Quick().withDefaults()}
	_, err := runSystem(context.Background(), e)
	var skip skipError
	require.ErrorAs(t, err, &skip)
	assert.Contains(t, skip.reason, "no daemon command")
}
