package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// auditLock is the advisory lock key that serialises audits, so that each
// one starts from the marks the last one left.
const auditLock = 0x61746f6d617564 // "atomaud"

// Audit is what one audit of the books found.
type Audit struct {
	Unbalanced   []Imbalance    // instructions whose entries do not sum to zero in an asset
	AccountDrift []AccountDrift // accounts that are not the sum of their entries
	Entries      int64          // entries read: those written since the last clean audit, or all
	Whole        bool           // the whole history was read (ledger.audit_full asked for it)
	Advanced     bool           // nothing found: the marks moved to the holders' heads
}

// Audit checks the books over what was written since the last clean audit:
// the entries of each holder's instructions past its mark in ledger.audited
// must sum to zero per instruction and asset, and every account they touch
// must equal its audited sum (ledger.audited_accounts) plus theirs (an
// account without a row is zero, as a settled transfer's clearing account
// is; an open one's amount is its sum in ledger.transfer_clearing). When
// nothing is wrong, the marks move to the holders' heads and the audited
// sums to the accounts' amounts; otherwise they stay, so that the next audit
// finds the same again. It reports at most limit of each finding.
//
// Its cost follows the holders and what is new, not the history. It reads
// the whole history instead (every entry and every account, as Unbalanced
// and AccountDrifts do) while ledger.audit_full has a row: on a new or
// upgraded ledger, and after anything but the sink wrote entries or
// accounts (the tables' triggers add one), since that may have changed what
// lies below the marks. A clean whole audit empties it.
//
// One audit runs at a time (an advisory lock), in one snapshot: the sink may
// write meanwhile; what it commits after the snapshot waits for the next one.
func (l *Ledger) Audit(ctx context.Context, limit int) (Audit, error) {
	var a Audit
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return a, fmt.Errorf("ledger audit: %w", err)
	}
	// A session lock, taken before the transaction's snapshot (a
	// transaction's own lock would come after it), so that the snapshot
	// sees the marks the last audit left.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(auditLock)); err != nil {
		conn.Release()
		return a, fmt.Errorf("ledger audit: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(auditLock)); err != nil {
			// Ending the session releases the lock: the pool must not keep it.
			_ = conn.Hijack().Close(context.WithoutCancel(ctx))
			return
		}
		conn.Release()
	}()
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		a = Audit{}
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM ledger.audit_full)").Scan(&a.Whole); err != nil {
			return err
		}
		// The entries written since the marks (auditFresh) or, for the whole
		// history, every entry.
		fresh := auditFresh
		// Each account the new entries touch, against its audited sum plus
		// theirs. Or every account, and the account of every entry, against
		// the sum of all its entries.
		// A transfer's clearing account has its amount in
		// ledger.transfer_clearing, not in ledger.accounts (migration 7).
		drift := `SELECT d.holder, d.kind, d.asset, (coalesce(a.amount, 0) + coalesce(c.clearing, 0))::text, (coalesce(b.amount, 0) + d.delta)::text
			FROM audit_delta d LEFT JOIN ledger.accounts a USING (holder, kind, asset)
				LEFT JOIN ledger.audited_accounts b USING (holder, kind, asset)
				LEFT JOIN ledger.transfer_clearing c
					ON d.kind = 'cp' AND d.holder LIKE 'x:%' AND c.transfer = substr(d.holder, 3) AND c.asset = d.asset
			WHERE coalesce(a.amount, 0) + coalesce(c.clearing, 0) <> coalesce(b.amount, 0) + d.delta
			ORDER BY 1, 2, 3 LIMIT $1`
		if a.Whole {
			fresh = `SELECT holder, seq, coalesce(account, holder) AS account, account_kind, asset, amount FROM ledger.entries`
			drift = `SELECT holder, kind, asset, coalesce(a.amount, 0)::text, coalesce(d.delta, 0)::text
				FROM ledger.account_amounts a FULL JOIN audit_delta d USING (holder, kind, asset)
				WHERE coalesce(a.amount, 0) <> coalesce(d.delta, 0)
				ORDER BY 1, 2, 3 LIMIT $1`
		}
		tag, err := tx.Exec(ctx, "CREATE TEMP TABLE audit_fresh ON COMMIT DROP AS "+fresh)
		if err != nil {
			return err
		}
		a.Entries = tag.RowsAffected()
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE audit_delta ON COMMIT DROP AS
			SELECT account AS holder, account_kind AS kind, asset, sum(amount) AS delta
			FROM audit_fresh GROUP BY 1, 2, 3`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT holder, seq, asset, sum(amount)::text FROM audit_fresh
			GROUP BY holder, seq, asset HAVING sum(amount) <> 0 ORDER BY holder, seq, asset LIMIT $1`, limit)
		if err != nil {
			return err
		}
		if a.Unbalanced, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Imbalance, error) {
			var i Imbalance
			return i, r.Scan(&i.Holder, &i.Seq, &i.Asset, &i.Sum)
		}); err != nil {
			return err
		}
		if rows, err = tx.Query(ctx, drift, limit); err != nil {
			return err
		}
		if a.AccountDrift, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (AccountDrift, error) {
			var d AccountDrift
			return d, r.Scan(&d.Owner, &d.Kind, &d.Asset, &d.Amount, &d.Entries)
		}); err != nil {
			return err
		}
		if len(a.Unbalanced) > 0 || len(a.AccountDrift) > 0 {
			return nil // the marks stay: the next audit reads this again
		}
		a.Advanced = true
		if a.Whole {
			// Only the rows this snapshot sees: a write by hand since asks again.
			if _, err := tx.Exec(ctx, "DELETE FROM ledger.audit_full; DELETE FROM ledger.audited_accounts"); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO ledger.audited (holder, seq)
				SELECT h.holder, h.seq FROM ledger.holders h LEFT JOIN ledger.audited m USING (holder)
				WHERE m.seq IS DISTINCT FROM h.seq
				ON CONFLICT (holder) DO UPDATE SET seq = EXCLUDED.seq;
			INSERT INTO ledger.audited_accounts (holder, kind, asset, amount)
				SELECT holder, kind, asset, delta FROM audit_delta WHERE delta <> 0
				ON CONFLICT (holder, kind, asset) DO UPDATE SET amount = ledger.audited_accounts.amount + EXCLUDED.amount;
			DELETE FROM ledger.audited_accounts b USING audit_delta d
				WHERE b.holder = d.holder AND b.kind = d.kind AND b.asset = d.asset AND b.amount = 0`)
		return err
	})
	if err != nil {
		return Audit{}, fmt.Errorf("ledger audit: %w", err)
	}
	return a, nil
}

// auditFresh reads, per holder whose head moved since its mark, its entries
// past the mark: an index range on (holder, seq) each. An entry's account
// NULL is the holder's own (migration 7). OFFSET 0 keeps the
// planner from flattening the lateral subquery into a join, which it may
// then make a hash join over every entry.
const auditFresh = `SELECT e.holder, e.seq, coalesce(e.account, e.holder) AS account, e.account_kind, e.asset, e.amount
	FROM ledger.holders h LEFT JOIN ledger.audited m USING (holder)
	CROSS JOIN LATERAL (SELECT * FROM ledger.entries e
		WHERE e.holder = h.holder AND e.seq > coalesce(m.seq, 0) AND e.seq <= h.seq OFFSET 0) e
	WHERE m.seq IS DISTINCT FROM h.seq`
