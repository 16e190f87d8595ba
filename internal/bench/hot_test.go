package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun_HotQuickCountsRight runs the hot part, tiny, on a cluster of 3
// masters: both library paths pay in every phase without an error, each
// phase's receivers gained what it paid (the hot merchant's lanes summed,
// after the sweeps), the payers lost what the transfers paid, the report
// has each master's share of the CPU and the sweep's cost; without a
// daemon command the http path says so.
func TestRun_HotQuickCountsRight(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Redis")
	}
	s := Quick()
	s.HotDur, s.HotPayers = 200*time.Millisecond, 50
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Settings: s, Parts: []string{"hot"}})
	require.NoError(t, err)

	h := rep.Hot
	require.Empty(t, h.Skipped)
	assert.Equal(t, 3, h.Masters)
	assert.Equal(t, 6, h.Lanes, "2 x the masters")
	sum := 0
	for _, n := range h.LanesPerMaster {
		sum += n
	}
	assert.Equal(t, h.Lanes, sum, "every lane is on a master")
	assert.Len(t, h.LanesPerMaster, 3)
	for name, p := range map[string]HotPath{"apply_batch": h.ApplyBatch, "transfer": h.Transfer} {
		require.Empty(t, p.Skipped, name)
		for phase, x := range map[string]HotPhase{"plain": p.Plain, "hot": p.Hot, "spread": p.Spread} {
			assert.Positive(t, x.PerSec, "%s %s", name, phase)
			assert.Positive(t, x.Payments, "%s %s", name, phase)
			assert.Zero(t, x.Errors, "%s %s: %s", name, phase, x.FirstError)
			assert.Len(t, x.Rounds, s.HotRounds, "%s %s", name, phase)
			assert.Positive(t, x.P50Ms, "%s %s", name, phase)
			assert.GreaterOrEqual(t, x.P99Ms, x.P50Ms, "%s %s", name, phase)
			assert.Len(t, x.MastersCPUShare, 3, "%s %s", name, phase)
			assert.Positive(t, x.MastersCPUMaxOverMin, "%s %s", name, phase)
			assert.Equal(t, x.Payments*100, x.PaidUnits, "%s %s: 1.00 CNY each", name, phase)
			assert.Equal(t, x.PaidUnits, x.ReceivedUnits, "%s %s: the receivers gained what was paid", name, phase)
		}
		assert.True(t, p.Money.Exact, name)
		assert.Equal(t, p.Plain.PaidUnits+p.Hot.PaidUnits+p.Spread.PaidUnits, p.Money.PaidUnits, name)
		assert.Equal(t, p.Money.PaidUnits, p.Money.ReceivedUnits, name)
		assert.Positive(t, p.HotOverSpread, name)
		assert.Positive(t, p.PlainOverSpread, name)
	}
	assert.Zero(t, h.ApplyBatch.Money.DebitedUnits, "credits alone: no payer")
	assert.Equal(t, h.Transfer.Money.PaidUnits, h.Transfer.Money.DebitedUnits, "the payers paid it all")
	assert.Contains(t, h.HTTP.Skipped, "no daemon command")

	assert.Equal(t, 2*s.HotRounds, h.Sweep.Sweeps, "one sweep after each hot phase of the two paths")
	assert.Zero(t, h.Sweep.Errors)
	assert.Positive(t, h.Sweep.LanesMoved)
	assert.Positive(t, h.Sweep.MsPerLane)
	assert.Positive(t, h.Sweep.RedisCPUUsecPerLane)
	assert.Positive(t, h.Sweep.ScriptUsecPerLane)

	met := map[string]Target{}
	for _, tg := range rep.Targets {
		met[tg.Name] = tg
	}
	assert.True(t, met["hot money exact, every path"].Met)
	assert.True(t, met["hot.http.hot_over_spread"].Skip)
	assert.False(t, met["hot.transfer.hot_over_spread"].Skip)
	assert.Equal(t, h.Transfer.Hot.MastersCPUMaxOverMin, met["hot.transfer.hot.masters_cpu_max_over_min"].Got)
}

func TestHotPhase_SharesAndMaxOverMin(t *testing.T) {
	a := &hotAcc{rates: []float64{100, 300, 200}, lat: []float64{3, 1, 2, 4}, cpu: []float64{0.5, 1, 0.25},
		took: time.Second, ok: 600, paid: 60000, recvd: 60000}
	p := a.phase()
	assert.Equal(t, 200.0, p.PerSec, "the median round")
	assert.Equal(t, []float64{100, 300, 200}, p.Rounds)
	assert.Equal(t, []float64{0.286, 0.571, 0.143}, p.MastersCPUShare)
	assert.Equal(t, 4.0, p.MastersCPUMaxOverMin)
	assert.Equal(t, 1.75, p.RedisCores)
	assert.Equal(t, 2.0, p.P50Ms)
	assert.Equal(t, 4.0, p.P99Ms)
	assert.Equal(t, int64(60000), p.ReceivedUnits)
}

func TestHotTargets_PerPathAndSkipped(t *testing.T) {
	path := func(hot, spread, maxMin float64) HotPath {
		return HotPath{Hot: HotPhase{PerSec: hot, MastersCPUMaxOverMin: maxMin}, Spread: HotPhase{PerSec: spread},
			HotOverSpread: round(hot / spread), Money: HotMoney{Exact: true}}
	}
	h := Hot{ApplyBatch: path(95, 100, 1.2), Transfer: path(80, 100, 1.6), HTTP: HotPath{Skipped: "no daemon"}}
	got := map[string]Target{}
	for _, tg := range hotTargets(h) {
		got[tg.Name] = tg
	}
	assert.True(t, got["hot.apply_batch.hot_over_spread"].Met)
	assert.True(t, got["hot.apply_batch.hot.masters_cpu_max_over_min"].Met)
	assert.False(t, got["hot.transfer.hot_over_spread"].Met)
	assert.False(t, got["hot.transfer.hot.masters_cpu_max_over_min"].Met)
	assert.True(t, got["hot.http.hot_over_spread"].Skip)
	assert.True(t, got["hot money exact, every path"].Met)

	h.Transfer.Money.Exact = false
	for _, tg := range hotTargets(h) {
		if tg.Name == "hot money exact, every path" {
			assert.False(t, tg.Met)
		}
	}
	for _, tg := range hotTargets(Hot{Skipped: "not asked for"}) {
		assert.True(t, tg.Skip, tg.Name)
		assert.False(t, tg.Met, tg.Name)
		assert.Equal(t, "not asked for", tg.Note, tg.Name)
	}
}
