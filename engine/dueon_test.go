package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
)

// A slot's index read skips only the entries earlier full reads left in
// place: 600 due entries, read 256 at a time; the worker acts on all but
// the first 10 of the first read (released: gone from the index), so the
// next read starts past those 10, at the first entry never tried, not 256
// further; a read that gives fewer than 256 sends the next back to the
// head, where the 10 are tried again.
func TestDueOn_AReadSkipsOnlyWhatTheWorkerLeftInPlace(t *testing.T) {
	srv := clustertest.StartForTest(t, clustertest.Options{Standalone: true})
	c := redis.NewClient(&redis.Options{Addr: srv.Nodes[0].Addr})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()

	key := func(int) string { return "idx" }
	for i := 1; i <= 600; i++ {
		require.NoError(t, c.ZAdd(ctx, "idx", redis.Z{Score: float64(i), Member: fmt.Sprintf("m%03d", i)}).Err())
	}
	x := &slotIndex{from: map[int]int{}, read: map[int]int{}}
	read := func() []indexEntry {
		t.Helper()
		next := map[int]time.Time{}
		got, _, err := dueOn(ctx, c, []int{0}, key, 256, false, next, x.from)
		require.NoError(t, err)
		x.noteRead(got, next)
		return got
	}
	first := read()
	require.Len(t, first, 256)
	for _, en := range first[10:] {
		require.NoError(t, c.ZRem(ctx, "idx", en.member).Err())
	}
	x.advance(map[int]int{0: 10}, 256)

	second := read()
	require.Len(t, second, 256)
	assert.Equal(t, "m257", second[0].member, "the first entry never tried")
	for _, en := range second {
		require.NoError(t, c.ZRem(ctx, "idx", en.member).Err())
	}
	x.advance(nil, 256)

	third := read()
	require.Len(t, third, 88, "m513 .. m600")
	assert.Equal(t, "m513", third[0].member)
	x.advance(map[int]int{0: 88}, 256)
	assert.Equal(t, "m001", read()[0].member, "a short read sends the next back to the head")
}
