package ledger

import (
	"context"
	"fmt"
)

// Imbalance is an instruction whose entries do not sum to zero in an asset.
type Imbalance struct {
	Holder string `json:"holder"`
	Seq    int64  `json:"seq"`
	Asset  string `json:"asset"`
	Sum    string `json:"sum"`
}

// Unbalanced finds instructions whose entries do not sum to zero per asset
// (at most limit of them). A sound ledger has none.
func (l *Ledger) Unbalanced(ctx context.Context, limit int) ([]Imbalance, error) {
	rows, err := l.pool.Query(ctx, `SELECT holder, seq, asset, sum(amount)::text FROM ledger.entries
		GROUP BY holder, seq, asset HAVING sum(amount) <> 0 ORDER BY holder, seq, asset LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger unbalanced: %w", err)
	}
	var out []Imbalance
	for rows.Next() {
		var i Imbalance
		if err := rows.Scan(&i.Holder, &i.Seq, &i.Asset, &i.Sum); err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// AccountDrift is an account whose amount is not the sum of its entries.
type AccountDrift struct {
	Owner   string `json:"owner"`
	Kind    string `json:"kind"`
	Asset   string `json:"asset"`
	Amount  string `json:"amount"`
	Entries string `json:"entries"`
}

// AccountDrifts finds accounts whose amount differs from the sum of their
// entries (at most limit of them). A sound ledger has none.
func (l *Ledger) AccountDrifts(ctx context.Context, limit int) ([]AccountDrift, error) {
	rows, err := l.pool.Query(ctx, `WITH e AS (
			SELECT account, account_kind, asset, sum(amount) AS total FROM ledger.entries GROUP BY 1, 2, 3)
		SELECT coalesce(a.holder, e.account), coalesce(a.kind, e.account_kind), coalesce(a.asset, e.asset),
			coalesce(a.amount, 0)::text, coalesce(e.total, 0)::text
		FROM ledger.accounts a FULL JOIN e ON a.holder = e.account AND a.kind = e.account_kind AND a.asset = e.asset
		WHERE coalesce(a.amount, 0) <> coalesce(e.total, 0)
		ORDER BY 1, 2, 3 LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger account drift: %w", err)
	}
	var out []AccountDrift
	for rows.Next() {
		var d AccountDrift
		if err := rows.Scan(&d.Owner, &d.Kind, &d.Asset, &d.Amount, &d.Entries); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// RefusedCount counts the events refused so far, per holder.
func (l *Ledger) RefusedCount(ctx context.Context) (map[string]int64, error) {
	rows, err := l.pool.Query(ctx, "SELECT holder, count(*) FROM ledger.refused GROUP BY holder")
	if err != nil {
		return nil, fmt.Errorf("ledger refused: %w", err)
	}
	out := map[string]int64{}
	for rows.Next() {
		var h string
		var n int64
		if err := rows.Scan(&h, &n); err != nil {
			return nil, err
		}
		out[h] = n
	}
	return out, rows.Err()
}
