package outbox_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/pgtest"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// An entry written straight into an outbox (a client with Redis access, or
// an older library) whose holder is 20,000 characters that do not compress.
// PostgreSQL refuses its row in ledger.instructions (the primary key's btree
// entry is over the 2,704-byte limit: SQLSTATE 54000, a program limit), so
// the sink isolates it and sets it aside, keeping the first 1,024 bytes of
// the holder in the set-aside row's (indexed) holder column and the whole
// name in its fields. The other holders' events, read in the same round,
// reach the ledger (DESIGN.md: one event PostgreSQL refuses stalls only its
// own holder). Before, the set-aside row was refused for the same reason
// (ledger.set_aside is indexed on holder and seq too), which failed the
// whole write: every holder sorted after the poison stalled for good, the
// relay's errors climbing, nothing set aside.
func TestRelay_AHolderNameTooLongForAnIndexStallsOnlyItself(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c, e := ownEngine(t)
	led, err := ledger.Open(ctx, pgtest.StartForTest(t).NewDatabase(t), nil)
	require.NoError(t, err)
	t.Cleanup(led.Close)
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })

	good := newID("p4-good")
	long := make([]byte, 20000)
	for i := range long {
		long[i] = 'a' + byte(rand.IntN(26))
	}
	long[0] = 'A' // sorts before the others: the sink's halving meets it first
	bad := stored.Event{Holder: string(long), Seq: 1, ID: "open", FP: "ab", TS: time.Now().UnixMilli(), CP: "external",
		Ops: `[{"op":"open"}]`, State: `{"s":"1","st":"active","b":{},"c":{},"h":{}}`, DV: stored.DigestV2}
	bad.Digest = stored.Digest("", bad)
	fields := map[string]any{}
	for k, v := range bad.Fields() {
		fields[k] = v
	}
	// In the good holder's own outbox, ahead of its events.
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: cluster.Outbox(cluster.HolderSlot(good)), Values: fields}).Err())
	_, err = e.Apply(ctx, instructions.New("open", good).Open().Credit("CNY", "10.00"))
	require.NoError(t, err)
	// And a holder of another slot.
	other := newID("p4-other")
	_, err = e.Apply(ctx, instructions.New("open", other).Open().Credit("CNY", "1.00"))
	require.NoError(t, err)

	relay := outbox.NewRelay(rdb, led, &outbox.Options{PollInterval: 10 * time.Millisecond, DiscoverInterval: 100 * time.Millisecond})
	runUntilCleanup(t, relay)

	arrived := func() bool {
		s, err := led.Snapshots(ctx, []string{good, other}, 0)
		require.NoError(t, err)
		return s[good] != nil && s[other] != nil
	}
	deadline := time.Now().Add(12 * time.Second) // the good events arrive within a second or two when it works
	for !arrived() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	set, _ := led.SetAside(ctx, 10)
	require.True(t, arrived(), "the other holders' events never reach the ledger (relay errors %d, set aside %d)",
		relay.Stats().Errors, len(set))
	require.Len(t, set, 1, "the long holder's event is set aside")
}
