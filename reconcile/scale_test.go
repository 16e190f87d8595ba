package reconcile

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/ledgertest"
	"github.com/atomledger/atomledger/ledger/pgtest"
)

// The size of BenchmarkReconcileScale's deployment.
var (
	scaleHolders   = flag.Int("scale.holders", 100000, "BenchmarkReconcileScale: holders")
	scaleTransfers = flag.Int("scale.transfers", 1000000, "BenchmarkReconcileScale: settled transfers (a multiple of the holders)")
)

// BenchmarkReconcileScale times Run, Redis and ledger, over -scale.holders
// holders, first with no transfers in the ledger, then with
// -scale.transfers settled ones (and 10 open, past the timeout). The ledger
// is written straight into its tables (ledgertest.FillScale) and Redis from
// it by Rebuild, so both sides agree; its books audited once before, as the
// last run would have:
//
//	go test -run '^$' -bench ReconcileScale -benchtime 1x ./reconcile/ -args -scale.holders=100000 -scale.transfers=1000000
func BenchmarkReconcileScale(b *testing.B) {
	if testing.Short() {
		b.Skip("needs Redis and PostgreSQL")
	}
	for _, transfers := range []int{0, *scaleTransfers} {
		b.Run(fmt.Sprintf("holders=%d/transfers=%d", *scaleHolders, transfers), func(b *testing.B) {
			ctx := context.Background()
			c := clustertest.StartForTest(b, clustertest.Options{Masters: 3})
			rdb := c.Client(nil)
			defer rdb.Close()
			eng := engine.New(rdb, nil)
			led, err := ledger.Open(ctx, pgtest.StartForTest(b).NewDatabase(b), nil)
			require.NoError(b, err)
			defer led.Close()
			open := min(10, transfers)
			start := time.Now()
			require.NoError(b, ledgertest.FillScale(ctx, led.Pool(), *scaleHolders, transfers, open))
			a, err := led.Audit(ctx, 10)
			require.NoError(b, err)
			require.True(b, a.Advanced)
			holders, err := led.Holders(ctx)
			require.NoError(b, err)
			res, err := Rebuild(ctx, eng, led, holders, false)
			require.NoError(b, err)
			require.Equal(b, len(holders), res.Rebuilt)
			b.Logf("ledger filled, audited and Redis rebuilt from it in %v", time.Since(start).Round(time.Millisecond))
			b.ResetTimer()
			for range b.N {
				rep, err := Run(ctx, eng, led, nil)
				require.NoError(b, err)
				assert.Equal(b, *scaleHolders, rep.InSync)
				assert.Equal(b, open, rep.Counts[KindTransferUnbalanced], "the open ones, past the timeout")
				assert.Zero(b, rep.AuditedEntries, "nothing new since the last audit")
				assert.Empty(b, rep.Unbalanced)
				assert.Empty(b, rep.AccountDrift)
			}
		})
	}
}
