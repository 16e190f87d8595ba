package ledger

import (
	"context"
	"fmt"
)

// TransferBalance is a transfer whose clearing account the ledger does not
// have at zero: some of its parts' commits are in and others are not.
type TransferBalance struct {
	Transfer  string            `json:"transfer"`
	Clearing  map[string]string `json:"clearing"`     // asset -> sum of the clearing account's entries, where not zero
	Prepared  int64             `json:"prepared"`     // parts whose prepare is in the ledger
	Committed int64             `json:"commit_parts"` // parts whose commit is in the ledger
	Holders   []string          `json:"holders"`      // holders with any of its parts' instructions in the ledger
	FirstMs   int64             `json:"first_ms"`     // server time of its first instruction in the ledger
}

// UnsettledTransfers lists, from the view ledger.transfer_balances, the
// transfers whose clearing account is not zero in some asset (at most limit
// of them). While a transfer's parts are on their way from Redis that is
// expected; once every part's commit is in, the clearing account is zero.
// The view is computed over every transfer, so this reads the transfers'
// whole history, as Unbalanced reads every entry.
func (l *Ledger) UnsettledTransfers(ctx context.Context, limit int) ([]TransferBalance, error) {
	rows, err := l.pool.Query(ctx, `WITH open AS (
			SELECT DISTINCT transfer FROM ledger.transfer_balances WHERE clearing <> 0 ORDER BY transfer LIMIT $1)
		SELECT transfer, asset, clearing::text, prepared, committed, holders, first_ms
		FROM ledger.transfer_balances JOIN open USING (transfer)
		WHERE clearing <> 0 ORDER BY transfer, asset`, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger unsettled transfers: %w", err)
	}
	var out []TransferBalance
	for rows.Next() {
		var t TransferBalance
		var asset, sum string
		if err := rows.Scan(&t.Transfer, &asset, &sum, &t.Prepared, &t.Committed, &t.Holders, &t.FirstMs); err != nil {
			return nil, err
		}
		if n := len(out); n > 0 && out[n-1].Transfer == t.Transfer {
			out[n-1].Clearing[asset] = sum
			continue
		}
		t.Clearing = map[string]string{asset: sum}
		out = append(out, t)
	}
	return out, rows.Err()
}
