package ledger_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
)

// TestWebhookLease: one holder of a webhook's lease at a time, until it
// releases it; the cursor a holder advanced is the next holder's; and
// leases take no connection of the ledger's pool, which serves the feed
// while more leases are held than it has connections.
func TestWebhookLease(t *testing.T) {
	needServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := openLedger(t)
	const url = "https://a.example/hook"

	first, err := l.LeaseWebhook(ctx, url)
	require.NoError(t, err)
	require.NotNil(t, first)
	c, err := first.Cursor(ctx)
	require.NoError(t, err)
	assert.Empty(t, c, "a new webhook starts at the first event")
	second, err := l.LeaseWebhook(ctx, url)
	require.NoError(t, err)
	assert.Nil(t, second, "another process holds it")
	require.NoError(t, first.Advance(ctx, "7.3.h", 3))
	first.Release()

	second, err = l.LeaseWebhook(ctx, url)
	require.NoError(t, err)
	require.NotNil(t, second, "released")
	defer second.Release()
	c, err = second.Cursor(ctx)
	require.NoError(t, err)
	assert.Equal(t, "7.3.h", c)

	n := int(l.Pool().Config().MaxConns) + 2
	for i := range n {
		w, err := l.LeaseWebhook(ctx, url+strconv.Itoa(i))
		require.NoError(t, err)
		require.NotNil(t, w)
		defer w.Release()
	}
	_, err = l.Feed(ctx, ledger.FeedQuery{})
	require.NoError(t, err, "the pool serves the feed while %d leases are held", n)
}
