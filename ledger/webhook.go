package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// webhookLockClass is the first key of the advisory lock a webhook's
// sender holds (the second is its row's lock_id).
const webhookLockClass = 0x61747768 // "atwh"

// WebhookLease is one process's hold on a webhook: while it holds it, no
// other process sends that webhook's batches, so two daemons configured
// alike do not both deliver. A session lock on a connection of its own,
// outside the pool (a lease per webhook would otherwise take the pool's
// few connections for good), held by no transaction: it holds back no
// reader of the feed, and it goes when the process or its connection dies.
type WebhookLease struct {
	conn *pgx.Conn
	url  string
}

// LeaseWebhook takes the webhook's lease, or gives nil when another process
// holds it.
func (l *Ledger) LeaseWebhook(ctx context.Context, url string) (*WebhookLease, error) {
	conn, err := pgx.ConnectConfig(ctx, l.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("lease webhook: %w", err)
	}
	var got bool
	err = conn.QueryRow(ctx, `WITH new AS (INSERT INTO ledger.webhooks (url) VALUES ($2) ON CONFLICT (url) DO NOTHING RETURNING lock_id)
		SELECT pg_try_advisory_lock($1, lock_id) FROM (SELECT lock_id FROM new UNION ALL
			SELECT lock_id FROM ledger.webhooks WHERE url = $2) w LIMIT 1`, int32(webhookLockClass), url).Scan(&got)
	if err != nil || !got {
		_ = conn.Close(ctx)
		if err != nil {
			return nil, fmt.Errorf("lease webhook: %w", err)
		}
		return nil, nil
	}
	return &WebhookLease{conn: conn, url: url}, nil
}

// Cursor reads where the webhook's next batch starts: "" for a webhook new
// to the ledger, which starts at the feed's first event.
func (w *WebhookLease) Cursor(ctx context.Context) (string, error) {
	var c string
	err := w.conn.QueryRow(ctx, `INSERT INTO ledger.webhooks (url) VALUES ($1)
		ON CONFLICT (url) DO UPDATE SET url = EXCLUDED.url RETURNING cursor`, w.url).Scan(&c)
	if err != nil {
		return "", fmt.Errorf("webhook cursor: %w", err)
	}
	return c, nil
}

// Advance records that the receiver took a batch of n events up to cursor.
func (w *WebhookLease) Advance(ctx context.Context, cursor string, n int) error {
	if _, err := w.conn.Exec(ctx, `UPDATE ledger.webhooks SET cursor = $2, delivered = delivered + $3, updated_at = now()
		WHERE url = $1`, w.url, cursor, n); err != nil {
		return fmt.Errorf("webhook cursor: %w", err)
	}
	return nil
}

// Release gives the lease back: its connection closes, and the lock goes
// with it.
func (w *WebhookLease) Release() {
	_ = w.conn.Close(context.Background())
}
