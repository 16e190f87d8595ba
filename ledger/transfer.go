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

// UnsettledTransfers lists the transfers whose clearing account is not zero
// in some asset (at most limit of them, by id). While a transfer's parts
// are on their way from Redis that is expected; once every part's commit is
// in, the clearing account is zero. It reads ledger.transfer_clearing, which
// holds only those transfers, then their parts' instructions by the index
// on transfer: its cost follows what is unsettled, not the history.
func (l *Ledger) UnsettledTransfers(ctx context.Context, limit int) ([]TransferBalance, error) {
	rows, err := l.pool.Query(ctx, unsettledQuery, limit)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger unsettled transfers: %w", err)
	}
	return out, nil
}

// unsettledQuery reads the open transfers, their sums and their parts, in
// one statement: the sums and the parts are of the same commits.
const unsettledQuery = `WITH open AS (
		SELECT DISTINCT transfer FROM ledger.transfer_clearing ORDER BY transfer LIMIT $1),
	parts AS (
		SELECT i.transfer,
			count(*) FILTER (WHERE i.id LIKE '%:p') AS prepared,
			count(*) FILTER (WHERE i.id LIKE '%:c') AS committed,
			array_agg(DISTINCT i.holder ORDER BY i.holder) AS holders,
			min(i.ts_ms) AS first_ms
		FROM ledger.instructions i JOIN open USING (transfer)
		GROUP BY i.transfer)
	SELECT c.transfer, c.asset, c.clearing::text, coalesce(p.prepared, 0), coalesce(p.committed, 0),
		coalesce(p.holders, '{}'), coalesce(p.first_ms, 0)
	FROM ledger.transfer_clearing c JOIN open USING (transfer) LEFT JOIN parts p USING (transfer)
	ORDER BY c.transfer, c.asset`
