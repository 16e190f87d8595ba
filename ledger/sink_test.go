package ledger_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/ledgertest"
	"github.com/atomledger/atomledger/stored"
)

// workload applies n random instructions over holders and returns their
// holders and events.
func workload(t testing.TB, seed uint64, holders, n int) ([]string, []map[string]string) {
	t.Helper()
	w := ledgertest.New(seed, "s"+strconv.FormatUint(seed, 36)+strconv.FormatInt(time.Now().UnixNano()%1e6, 36), holders)
	ins := w.Opens()
	for range n {
		ins = append(ins, w.Next())
	}
	applied := apply(t, ins)
	evs := outboxEvents(t, w.Holders)
	require.Len(t, evs, applied, "one event per applied instruction")
	return w.Holders, evs
}

// requireSameAsRedis checks every holder's ledger state against Redis.
func requireSameAsRedis(t *testing.T, l *ledger.Ledger, holders []string) {
	t.Helper()
	ctx := context.Background()
	fromPG, err := l.Snapshots(ctx, holders, 0)
	require.NoError(t, err)
	fromRedis, err := eng.Snapshots(ctx, holders)
	require.NoError(t, err)
	for _, h := range holders {
		require.Contains(t, fromPG, h)
		r := *fromRedis[h]
		r.LanesHist = "" // lane 0's raises: the ledger reads them for a rebuild's window only
		assert.Equal(t, r, *fromPG[h], "holder %s", h)
	}
	unbalanced, err := l.Unbalanced(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, unbalanced, "every instruction's entries sum to zero per asset")
	drift, err := l.AccountDrifts(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, drift, "every account is the sum of its entries")
}

func TestSink_RandomEventsInOrder(t *testing.T) {
	needServers(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	holders, evs := workload(t, seed, 200, 5000)
	l := openLedger(t)
	start := time.Now()
	for lo := 0; lo < len(evs); lo += 1000 {
		rep, err := l.Apply(context.Background(), stored.Entries(evs[lo:min(lo+1000, len(evs))]...))
		require.NoError(t, err)
		assert.Zero(t, rep.Parked+rep.Refused+rep.Duplicates)
	}
	took := time.Since(start)
	t.Logf("%d events into PostgreSQL in %v: %.0f events/s (batches of 1000)", len(evs), took, float64(len(evs))/took.Seconds())
	assert.Equal(t, int64(len(evs)), l.Stats().Applied)
	requireSameAsRedis(t, l, holders)
}

func TestSink_DuplicatesAndOutOfOrder(t *testing.T) {
	needServers(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 1))
	holders, evs := workload(t, seed, 50, 2000)
	// Every event once, a fifth of them twice, in shuffled order, in batches of random sizes.
	sent := append([]map[string]string(nil), evs...)
	for _, e := range evs {
		if rnd.IntN(5) == 0 {
			sent = append(sent, e)
		}
	}
	rnd.Shuffle(len(sent), func(i, j int) { sent[i], sent[j] = sent[j], sent[i] })
	l := openLedger(t)
	var parked int
	for lo := 0; lo < len(sent); {
		hi := min(lo+1+rnd.IntN(300), len(sent))
		rep, err := l.Apply(context.Background(), stored.Entries(sent[lo:hi]...))
		require.NoError(t, err)
		parked += rep.Parked
		lo = hi
	}
	st := l.Stats()
	t.Logf("stats %+v", st)
	assert.Equal(t, int64(len(evs)), st.Applied, "each event applied once")
	assert.GreaterOrEqual(t, st.Duplicates, int64(len(sent)-len(evs)-parked), "the rest were duplicates")
	assert.Positive(t, st.Parked, "shuffling made gaps")
	assert.Zero(t, st.Refused+st.Conflicts)
	gaps, err := l.Gaps(context.Background())
	require.NoError(t, err)
	assert.Zero(t, gaps, "every gap filled")
	requireSameAsRedis(t, l, holders)
}

// holderEvents opens a holder, applies a few instructions, and returns its events.
func holderEvents(t *testing.T) (string, []map[string]string) {
	t.Helper()
	h := "d-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	apply(t, []instructions.Instruction{
		instructions.New("o", h).Open().Credit("CNY", "10.00"),
		instructions.New("a", h).Debit("CNY", "1.00"),
		instructions.New("b", h).Freeze("CNY", "2.00", "x", time.Hour),
	})
	evs := outboxEvents(t, []string{h})
	require.Len(t, evs, 3)
	return h, evs
}

func copyFields(f map[string]string) map[string]string {
	c := map[string]string{}
	for k, v := range f {
		c[k] = v
	}
	return c
}

func TestSink_RefusesBrokenDigest(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	h, evs := holderEvents(t)
	l := openLedger(t)
	_, err := l.Apply(ctx, stored.Entries(evs[:1]...))
	require.NoError(t, err)

	t.Run("an event whose fields were changed is set aside", func(t *testing.T) {
		bad := copyFields(evs[1])
		bad["memo"] = "tampered"
		rep, err := l.Apply(ctx, stored.Entries(bad))
		require.NoError(t, err)
		assert.Equal(t, ledger.Report{SetAside: 1}, rep)
	})
	t.Run("an event chained on another history is set aside", func(t *testing.T) {
		ev, err := stored.ParseEvent(copyFields(evs[1]))
		require.NoError(t, err)
		ev.Digest = stored.Digest("0000", ev)
		rep, err := l.Apply(ctx, stored.Entries(ev.Fields()))
		require.NoError(t, err)
		assert.Equal(t, 1, rep.SetAside)
	})
	t.Run("the genuine history then applies", func(t *testing.T) {
		rep, err := l.Apply(ctx, stored.Entries(evs[1:]...))
		require.NoError(t, err)
		assert.Equal(t, 2, rep.Applied)
		requireSameAsRedis(t, l, []string{h})
	})
	t.Run("a duplicate that differs is a conflict", func(t *testing.T) {
		bad := copyFields(evs[1])
		bad["digest"] = "feed"
		rep, err := l.Apply(ctx, stored.Entries(bad, evs[2]))
		require.NoError(t, err)
		assert.Equal(t, ledger.Report{Duplicates: 2, Conflicts: 1, Refused: 1}, rep)
	})
	t.Run("a malformed event is set aside, the rest applies", func(t *testing.T) {
		rep, err := l.Apply(ctx, stored.Entries(map[string]string{"holder": h, "seq": "x"}))
		require.NoError(t, err)
		assert.Equal(t, 1, rep.SetAside)
	})
	refused, err := l.RefusedCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), refused[h], "one conflict and the two set aside whose digest does not chain: the malformed one tells of no other history")
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	assert.Len(t, set, 3, "left for an operator to look at")
}

func TestSink_GapWaitsForTheMissingEvent(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	h, evs := holderEvents(t)
	l := openLedger(t)
	rep, err := l.Apply(ctx, stored.Entries(evs[2], evs[0]))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Applied: 1, Parked: 1}, rep)
	gaps, err := l.Gaps(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), gaps)

	rep, err = l.Apply(ctx, stored.Entries(evs[1:2]...))
	require.NoError(t, err)
	assert.Equal(t, ledger.Report{Applied: 2, Unparked: 1}, rep)
	gaps, err = l.Gaps(ctx)
	require.NoError(t, err)
	assert.Zero(t, gaps)
	requireSameAsRedis(t, l, []string{h})
}

// schemaVersion is the last migration's version, what Migrate answers.
const schemaVersion = 13

func TestMigrate_Idempotent(t *testing.T) {
	needServers(t)
	l := openLedger(t)
	for range 2 {
		v, err := ledger.Migrate(context.Background(), l.Pool())
		require.NoError(t, err)
		assert.Equal(t, schemaVersion, v)
	}
}

// The events of open with lanes and of set_lanes (the lanes in the op's
// units, no movement) go into the ledger like any other: none refused, the
// holder's state the same as in Redis, every entry balanced.
func TestSink_EventsOfHotHolders(t *testing.T) {
	needServers(t)
	h := "hot-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	require.Equal(t, 4, apply(t, []instructions.Instruction{
		instructions.New("o", h).OpenHot(4).Credit("CNY", "10.00"),
		instructions.New("a", h).SetLanes(4).Debit("CNY", "1.00"),
		instructions.New("b", h).SetLanes(9),
		instructions.New("c", h).Suspend().SetLanes(12), // refused: HOLDER_SUSPENDED
		instructions.New("d", h).Suspend(),
	}))
	evs := outboxEvents(t, []string{h})
	require.Len(t, evs, 4)
	assert.Equal(t, `[{"op":"set_lanes","units":"9"}]`, evs[2]["ops"])
	l := openLedger(t)
	rep, err := l.Apply(context.Background(), stored.Entries(evs...))
	require.NoError(t, err)
	assert.Zero(t, rep.Parked+rep.Refused+rep.Duplicates, "%+v", rep)
	assert.Equal(t, int64(4), l.Stats().Applied)
	requireSameAsRedis(t, l, []string{h}) // the lane count too
	st, err := l.Statement(context.Background(), h, 0, ledger.MaxStatementLimit)
	require.NoError(t, err)
	require.Len(t, st.Events, 4)
	assert.Equal(t, 4, st.Events[0].Ops[0].Lanes, "open with lanes names its count, not an amount")
	assert.Equal(t, 9, st.Events[2].Ops[0].Lanes)
	assert.Empty(t, st.Events[2].Ops[0].Amount)
}
