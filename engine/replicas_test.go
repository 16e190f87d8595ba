package engine_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// replicaSeq reads a holder's seq from the replica at addr (READONLY on
// one connection): what a failover to it would keep.
func replicaSeq(t *testing.T, addr, holder string) string {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	cn := c.Conn()
	defer cn.Close()
	require.NoError(t, cn.ReadOnly(ctx).Err())
	seq, err := cn.HGet(ctx, cluster.Holder(holder), stored.FieldSeq).Result()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	return seq
}

// TestReplicaAcks_AnswersOnlyWhatAReplicaHas runs an engine with
// MinReplicaAcks 1 on a master with one replica, stopped (SIGSTOP: still
// connected, acknowledging nothing) in the middle. While it runs, every
// answer is on the replica when given. While it is stopped, what the
// script applied or recorded is answered UNAVAILABLE (Apply, ApplyBatch,
// and a replay alone, which wrote nothing this time); a rejection for an
// unknown holder, which wrote nothing, keeps its answer. Once the replica
// runs again, the same ids get the outcomes the master recorded, each
// applied once.
func TestReplicaAcks_AnswersOnlyWhatAReplicaHas(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A cluster of its own, whatever ATOMLEDGER_TEST_REDIS says: its
	// replica is stopped.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := clustertest.Start(sctx, clustertest.Options{Masters: 1, Replicas: 1})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	// Reads outlast the longest wait for the replica (below).
	rdb := c.Client(&redis.ClusterOptions{ReadTimeout: 3 * time.Minute, WriteTimeout: 10 * time.Second})
	defer rdb.Close()
	// While the replica runs, answers wait for it as long as a loaded machine
	// may take; while it is stopped, a second is enough: it never confirms.
	e := engine.New(rdb, &engine.Options{MinReplicaAcks: 1, ReplicaAckTimeout: 2 * time.Minute})
	toStopped := engine.New(rdb, &engine.Options{MinReplicaAcks: 1, ReplicaAckTimeout: time.Second})
	require.NoError(t, e.Load(ctx))
	replica := c.Nodes[1].Addr // masters first, then their replicas

	h, ghost := newID("ra"), newID("ghost")
	open := instructions.New("open", h).Open().Credit("CNY", "10.00")
	res, err := e.Apply(ctx, open)
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Seq)
	assert.Equal(t, "1", replicaSeq(t, replica, h), "an acknowledged instruction is on the replica when answered")

	pid := processID(t, replica)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})

	debit := instructions.New("d1", h).Debit("CNY", "1.00")
	_, err = toStopped.Apply(ctx, debit)
	require.ErrorIs(t, err, engine.ErrUnavailable, "applied on the master only")
	assert.Contains(t, err.Error(), "not known to be on a replica")
	st, err := toStopped.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.Seq, "the master applied it")

	batch := []instructions.Instruction{
		instructions.New("b1", h).Credit("CNY", "0.50"),           // applies
		instructions.New("b2", h).Debit("CNY", "1000.00"),         // INSUFFICIENT_FUNDS, recorded
		instructions.New("b3", ghost).Credit("CNY", "1.00"),       // HOLDER_NOT_FOUND, nothing written
		instructions.New("open", h).Open().Credit("CNY", "10.00"), // a replay
	}
	out := toStopped.ApplyBatch(ctx, batch)
	require.Len(t, out, len(batch))
	assert.ErrorIs(t, out[0].Err, engine.ErrUnavailable, "an applied instruction")
	assert.ErrorIs(t, out[1].Err, engine.ErrUnavailable, "a recorded rejection")
	assert.ErrorIs(t, out[2].Err, engine.ErrHolderNotFound, "nothing written: nothing to wait for")
	assert.ErrorIs(t, out[3].Err, engine.ErrUnavailable, "a replay of what the replica may lack")

	// A replay alone writes nothing: the engine writes the record's expiry
	// again so that WAIT covers it, and the stopped replica confirms none.
	_, err = toStopped.Apply(ctx, open)
	require.ErrorIs(t, err, engine.ErrUnavailable, "a replay alone")

	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	stopped = false
	// The retries come once the replica runs and has caught up, not in the
	// instant after SIGCONT, before it is scheduled again.
	for deadline := time.Now().Add(2 * time.Minute); replicaSeq(t, replica, h) != "3"; time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the resumed replica never had what the master applied")
	}

	// The retries, verbatim: each gets what the master recorded, marked
	// replayed, and nothing applies twice.
	again, err := e.Apply(ctx, debit)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, int64(2), again.Seq)
	out = e.ApplyBatch(ctx, batch)
	require.Len(t, out, len(batch))
	require.NoError(t, out[0].Err)
	assert.True(t, out[0].Result.Replayed)
	assert.Equal(t, int64(3), out[0].Result.Seq)
	assert.ErrorIs(t, out[1].Err, engine.ErrInsufficientFunds)
	var rej *engine.Error
	if assert.ErrorAs(t, out[1].Err, &rej) {
		assert.True(t, rej.Replayed, "the recorded rejection")
	}
	assert.ErrorIs(t, out[2].Err, engine.ErrHolderNotFound)
	require.NoError(t, out[3].Err)
	assert.True(t, out[3].Result.Replayed)
	_, err = e.Apply(ctx, open)
	require.NoError(t, err, "a replay alone, confirmed by the replica")

	st, err = e.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, int64(3), st.Seq, "open, d1 and b1 applied once each")
	assert.Equal(t, "9.50", st.Balances["CNY"].Available)
	assert.Equal(t, "3", replicaSeq(t, replica, h), "everything answered is on the replica")
	assert.Empty(t, keysOn(t, rdb, ghost), "nothing written for the unknown holder")
}

// keysOn lists every key with the holder's hash tag on the master of its
// slot, through rdb.
func keysOn(t *testing.T, rdb *redis.ClusterClient, holder string) []string {
	t.Helper()
	ctx := context.Background()
	tag := "{h:" + holder + "}"
	m, err := rdb.MasterForKey(ctx, tag)
	require.NoError(t, err)
	keys, err := m.Keys(ctx, tag+"*").Result()
	require.NoError(t, err)
	return keys
}
