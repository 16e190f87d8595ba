package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The sweeper and the transfer recovery worker read every slot's index on
// its master. A slot being moved answers MOVED or ASK there: that slot alone
// must be read where the answer points, and every other slot's entries acted
// on, not the whole master given up (docs/events.md, Expiry index).

// openWithHold opens holder with 10.00 CNY, 4.00 of it frozen under a hold
// that expires at once.
func openWithHold(ctx context.Context, t *testing.T, e *engine.Engine, holder string) {
	t.Helper()
	_, err := e.Apply(ctx, instructions.New("open", holder).Open().Credit("CNY", "10.00").
		Freeze("CNY", "4.00", "order-1", time.Millisecond))
	require.NoError(t, err)
}

// sweepUntilReleased sweeps with s until every holder's hold is released,
// or fails after a generous deadline. It gives the last sweep's error.
func sweepUntilReleased(ctx context.Context, t *testing.T, e *engine.Engine, s *engine.Sweeper, holders []string) error {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := s.Sweep(ctx)
		left := 0
		for _, h := range holders {
			st, serr := e.State(ctx, h)
			require.NoError(t, serr)
			if len(st.Holds) > 0 {
				left++
			} else {
				assert.Equal(t, "10.00", st.Balances["CNY"].Available, "holder %s", h)
			}
		}
		if left == 0 {
			return err
		}
		require.True(t, time.Now().Before(deadline), "%d holds of %d not released; last sweep: %v", left, len(holders), err)
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSweeper_SlotLeftMigratingHoldsElsewhereReleased(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 2})
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(rdb, &engine.Options{TransferTimeout: 100 * time.Millisecond})
	a, b := c.Nodes[0], c.Nodes[1]

	used := map[int]bool{}
	var holders []string
	for range 4 {
		h := c.HolderOn(ctx, t, "mv", a.Addr, used)
		used[cluster.HolderSlot(h)] = true
		holders = append(holders, h)
		openWithHold(ctx, t, e, h)
	}
	// A transfer left preparing by its driver, for the recovery worker.
	payee := c.HolderOn(ctx, t, "mv", a.Addr, used)
	used[cluster.HolderSlot(payee)] = true
	_, err := e.Apply(ctx, instructions.New("open", payee).Open())
	require.NoError(t, err)
	tr := instructions.Transfer{ID: newID("t"), Parts: []instructions.Part{
		{Holder: holders[0], Ops: instructions.Instruction{}.Debit("CNY", "1.00").Ops},
		{Holder: payee, Ops: instructions.Instruction{}.Credit("CNY", "1.00").Ops}}}
	used[cluster.Slot(cluster.Transfer(tr.ID))] = true
	require.NoError(t, e.TransferStep(ctx, tr, "begin", 0))

	// A slot of a's that none of them uses, left MIGRATING to b by hand.
	stuck := -1
	for s := 0; stuck < 0; s++ {
		if m, err := c.MasterOf(ctx, s); err == nil && m == a.Addr && !used[s] {
			stuck = s
		}
	}
	ac := redis.NewClient(&redis.Options{Addr: a.Addr})
	defer ac.Close()
	bc := redis.NewClient(&redis.Options{Addr: b.Addr})
	defer bc.Close()
	require.NoError(t, bc.Do(ctx, "cluster", "setslot", stuck, "importing", a.ID).Err())
	require.NoError(t, ac.Do(ctx, "cluster", "setslot", stuck, "migrating", b.ID).Err())
	t.Cleanup(func() {
		_ = ac.Do(ctx, "cluster", "setslot", stuck, "stable").Err()
		_ = bc.Do(ctx, "cluster", "setslot", stuck, "stable").Err()
	})

	t.Run("the sweeper releases the holds of the other slots", func(t *testing.T) {
		assert.NoError(t, sweepUntilReleased(ctx, t, e, engine.NewSweeper(e, nil), holders), "the migrating slot's index is read on b")
	})
	t.Run("the recovery worker aborts the transfer of another slot", func(t *testing.T) {
		r := engine.NewRecovery(e, nil)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			err := r.Recover(ctx)
			st, rerr := e.GetTransfer(ctx, tr.ID)
			require.NoError(t, rerr)
			if st.Status == engine.TransferAborted && st.Complete {
				assert.NoError(t, err)
				break
			}
			require.True(t, time.Now().Before(deadline), "transfer %s, last pass: %v", st.Status, err)
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// A reshard in the middle of moving a slot of a's: every key of the slot
// (a holder's, the slot's outbox and expiry index) moved to b by MIGRATE, b
// not yet the slot's owner, so a answers ASK for all of them. The expired
// hold of a's other slot is released meanwhile; the moving holder's hold,
// whose index entry is read on b, cannot be yet (a script over keys of a
// slot being imported is refused TRYAGAIN until the slot is b's), and is
// released once the reshard gives the slot to b.
func TestSweeper_ReleasesDuringAReshard(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 2})
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(rdb, nil)
	a, b := c.Nodes[0], c.Nodes[1]

	moving := c.HolderOn(ctx, t, "mv", a.Addr, nil)
	slot := cluster.HolderSlot(moving)
	other := c.HolderOn(ctx, t, "mv", a.Addr, map[int]bool{slot: true})
	openWithHold(ctx, t, e, moving)
	openWithHold(ctx, t, e, other)

	require.Positive(t, clustertest.MoveSlotKeys(ctx, t, slot, a, b))
	s := engine.NewSweeper(e, nil)
	_ = sweepUntilReleased(ctx, t, e, s, []string{other})
	assert.Positive(t, s.Stats().Errors, "the moving holder's entry was read on b, its release refused TRYAGAIN")

	clustertest.AssignSlot(ctx, t, slot, a, b)
	assert.NoError(t, sweepUntilReleased(ctx, t, e, s, []string{moving, other}))
}

// A running sweeper reads only the expiry indexes that may hold something
// due: a hold whose slot moves to another master while the sweeper idles
// is released there once it expires (its index is read where CLUSTER SLOTS
// or a MOVED answer points), and one frozen on the new master after the
// move is noticed there.
func TestSweeper_RunReleasesAHoldWhoseSlotMovedWhileIdle(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 2})
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(rdb, nil)
	a, b := c.Nodes[0], c.Nodes[1]

	moving := c.HolderOn(ctx, t, "mv", a.Addr, nil)
	slot := cluster.HolderSlot(moving)
	_, err := e.Apply(ctx, instructions.New("open", moving).Open().Credit("CNY", "10.00").
		Freeze("CNY", "4.00", "order-1", 4*time.Second))
	require.NoError(t, err)

	s := engine.NewSweeper(e, &engine.SweeperOptions{Interval: 50 * time.Millisecond})
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = s.Run(sctx); close(done) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return s.Stats().Sweeps >= 5 }, 2*time.Minute, 10*time.Millisecond)

	require.Positive(t, clustertest.MoveSlotKeys(ctx, t, slot, a, b))
	clustertest.AssignSlot(ctx, t, slot, a, b)
	released := func(h string) bool {
		st, err := e.State(ctx, h)
		return err == nil && len(st.Holds) == 0 && st.Balances["CNY"].Available == "10.00"
	}
	require.Eventually(t, func() bool { return released(moving) }, 2*time.Minute, 20*time.Millisecond,
		"the moved hold is released on its new master; sweeper %+v", s.Stats())

	later := newID("mv")
	for cluster.HolderSlot(later) != slot {
		later = newID("mv")
	}
	_, err = e.Apply(ctx, instructions.New("open", later).Open().Credit("CNY", "10.00").
		Freeze("CNY", "4.00", "order-1", 200*time.Millisecond))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return released(later) }, 2*time.Minute, 20*time.Millisecond,
		"a hold frozen on the new master is released; sweeper %+v", s.Stats())
}
