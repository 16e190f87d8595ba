package ledger_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

// Two sinks (two relays, one delivering what the other claimed) given the
// same event to set aside at once record it once: one open row, whichever
// commits first. A malformed event is set aside before any holder is
// locked, so nothing else orders the two writes.
func TestSetAside_TwoSinksAtOnceRecordOneRow(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	const rounds = 40
	for i := range rounds {
		h := &history{holder: "twice-" + tag + "-" + strconv.Itoa(i)}
		ev := h.open()
		delete(ev, "ops") // malformed
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := l.Apply(ctx, stored.Entries(ev))
				assert.NoError(t, err)
			}()
		}
		close(start)
		wg.Wait()
		var n int64
		require.NoError(t, l.Pool().QueryRow(ctx, "SELECT count(*) FROM ledger.set_aside WHERE holder = $1 AND resolved_at IS NULL", h.holder).Scan(&n))
		require.Equal(t, int64(1), n, "round %d: the event set aside once", i)
	}
}
