package ledger

import (
	"context"
	"fmt"
	"time"
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
// entries (at most limit of them); an account without a row is zero. A
// sound ledger has none.
func (l *Ledger) AccountDrifts(ctx context.Context, limit int) ([]AccountDrift, error) {
	rows, err := l.pool.Query(ctx, `WITH e AS (
			SELECT coalesce(account, holder) AS account, account_kind, asset, sum(amount) AS total FROM ledger.entries GROUP BY 1, 2, 3)
		SELECT coalesce(a.holder, e.account), coalesce(a.kind, e.account_kind), coalesce(a.asset, e.asset),
			coalesce(a.amount, 0)::text, coalesce(e.total, 0)::text
		FROM ledger.account_amounts a FULL JOIN e ON a.holder = e.account AND a.kind = e.account_kind AND a.asset = e.asset
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

// RefusedCount counts, per holder, the events the ledger refused as another
// history than its own: the conflicts, and the events set aside, not
// resolved yet, whose digest does not chain. An event set aside for a cause
// that can be mended (malformed, or refused by PostgreSQL) stalls its holder
// but tells nothing of Redis's history: it is not counted.
func (l *Ledger) RefusedCount(ctx context.Context) (map[string]int64, error) {
	rows, err := l.pool.Query(ctx, `SELECT holder, count(*) FROM (
			SELECT holder FROM ledger.refused
			UNION ALL SELECT holder FROM ledger.set_aside WHERE resolved_at IS NULL AND starts_with(reason, $1)) AS r
		GROUP BY holder`, unchained)
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

// SetAsideEvent is an event the sink set aside and no one resolved yet: its
// holder's later events wait behind it (docs/ledger.md says how to repair it).
type SetAsideEvent struct {
	ID       int64     `json:"id"` // of its ledger.set_aside row
	Holder   string    `json:"holder"`
	Seq      int64     `json:"seq"`
	Stream   string    `json:"stream"`
	Entry    string    `json:"entry"` // the stream entry id it had
	Reason   string    `json:"reason"`
	SetAside time.Time `json:"set_aside_at"`
}

// SetAside lists the events set aside and not resolved (at most limit of
// them), oldest first.
func (l *Ledger) SetAside(ctx context.Context, limit int) ([]SetAsideEvent, error) {
	rows, err := l.pool.Query(ctx, `SELECT id, holder, seq, stream, entry, reason, set_aside_at FROM ledger.set_aside
		WHERE resolved_at IS NULL ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger set aside: %w", err)
	}
	out := []SetAsideEvent{}
	for rows.Next() {
		var e SetAsideEvent
		if err := rows.Scan(&e.ID, &e.Holder, &e.Seq, &e.Stream, &e.Entry, &e.Reason, &e.SetAside); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetAsideCount counts the events set aside and not resolved.
func (l *Ledger) SetAsideCount(ctx context.Context) (int64, error) {
	var n int64
	err := l.pool.QueryRow(ctx, "SELECT count(*) FROM ledger.set_aside WHERE resolved_at IS NULL").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("ledger set aside: %w", err)
	}
	return n, nil
}
