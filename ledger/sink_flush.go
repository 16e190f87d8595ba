package ledger

// Writing a batch: the rows the sink has gathered, sent in one transaction.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/stored"
)

// flush writes the batch's rows: COPY for the append-only tables, one
// multi-row statement per table for the rest, all in one round trip.
func (w *batchWrites) flush(ctx context.Context, tx pgx.Tx) error {
	if len(w.entries) > 0 || len(w.deltas) > 0 {
		// The books' triggers ask for a whole audit when anyone else writes
		// them (migration 6).
		if _, err := tx.Exec(ctx, "SET LOCAL atomledger.writer = 'sink'"); err != nil {
			return err
		}
	}
	if len(w.instructions) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ledger", "instructions"},
			[]string{"holder", "seq", "id", "fp", "ts_ms", "counterparty", "memo", "ops", "state", "digest", "transfer", "dv"},
			pgx.CopyFromRows(w.instructions)); err != nil {
			return fmt.Errorf("copy instructions: %w", err)
		}
	}
	if len(w.entries) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ledger", "entries"},
			[]string{"holder", "seq", "n", "op_index", "account", "account_kind", "asset", "amount"},
			pgx.CopyFromRows(w.entries)); err != nil {
			return fmt.Errorf("copy entries: %w", err)
		}
	}
	b := &pgx.Batch{}
	// A holder's own rows (its head, accounts, coupons, holds) change only
	// by its events, under its advisory lock (lockHeads): each is updated
	// where it has a row and inserted where not, with no upsert, whose row
	// lock is a WAL record per row. Rows another batch may change at once
	// (a counterparty's account, a transfer's clearing sum, whose parts are
	// other holders' events) are upserted in key order, the same in every
	// batch, so two batches wait for each other's row locks without a
	// deadlock.
	//
	// A counterparty's or clearing sum the batch leaves as it was (a
	// transfer whose parts all came in this batch) is not written at all:
	// such an account without a row is zero. A holder's own account is in
	// deltas when an instruction changed it (apply), and keeps its row even
	// at zero, as Redis keeps its field.
	var own, cps accountColumns
	for _, k := range slices.SortedFunc(maps.Keys(w.deltas), func(a, b acctKey) int {
		return cmp.Or(strings.Compare(a.owner, b.owner), strings.Compare(a.kind, b.kind), strings.Compare(a.asset, b.asset))
	}) {
		switch {
		case k.kind != stored.SideCP:
			own.add(k, w.deltas[k].String())
		case w.deltas[k].Sign() != 0:
			cps.add(k, w.deltas[k].String())
		}
	}
	if len(own.owners) > 0 {
		b.Queue(`WITH d AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) AS d(h, k, a, n)),
			s AS (UPDATE ledger.accounts t SET amount = t.amount + d.n FROM d
				WHERE t.holder = d.h AND t.kind = d.k AND t.asset = d.a RETURNING t.holder, t.kind, t.asset)
			INSERT INTO ledger.accounts (holder, kind, asset, amount)
			SELECT h, k, a, n FROM d WHERE NOT EXISTS (SELECT FROM s WHERE s.holder = d.h AND s.kind = d.k AND s.asset = d.a)`,
			own.owners, own.kinds, own.assets, own.amounts)
	}
	if len(cps.owners) > 0 {
		b.Queue(`INSERT INTO ledger.accounts (holder, kind, asset, amount)
			SELECT h, k, a, n FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) WITH ORDINALITY AS u(h, k, a, n, i) ORDER BY i
			ON CONFLICT (holder, kind, asset) DO UPDATE SET amount = ledger.accounts.amount + EXCLUDED.amount`,
			cps.owners, cps.kinds, cps.assets, cps.amounts)
	}
	var transfers, sumAssets, sums []string
	for _, k := range slices.SortedFunc(maps.Keys(w.clearing), func(a, b clearKey) int {
		return cmp.Or(strings.Compare(a.transfer, b.transfer), strings.Compare(a.asset, b.asset))
	}) {
		if w.clearing[k].Sign() != 0 {
			transfers, sumAssets, sums = append(transfers, k.transfer), append(sumAssets, k.asset), append(sums, w.clearing[k].String())
		}
	}
	if len(transfers) > 0 {
		// A sum that reaches zero leaves the table (in this transaction,
		// which holds its row lock): what stays is what is unsettled.
		b.Queue(`INSERT INTO ledger.transfer_clearing (transfer, asset, clearing)
			SELECT t, a, n FROM unnest($1::text[], $2::text[], $3::numeric[]) WITH ORDINALITY AS u(t, a, n, i) ORDER BY i
			ON CONFLICT (transfer, asset) DO UPDATE SET clearing = ledger.transfer_clearing.clearing + EXCLUDED.clearing`,
			transfers, sumAssets, sums)
		b.Queue(`DELETE FROM ledger.transfer_clearing c USING unnest($1::text[], $2::text[]) AS u(t, a)
			WHERE c.transfer = u.t AND c.asset = u.a AND c.clearing = 0`, transfers, sumAssets)
	}
	if len(w.heads) > 0 {
		// lockHeads read the heads that have a row.
		var add, set headColumns
		for _, h := range slices.Sorted(maps.Keys(w.heads)) {
			if hd := w.heads[h]; hd.exists {
				set.add(h, hd)
			} else {
				add.add(h, hd)
			}
		}
		if len(add.hs) > 0 {
			b.Queue(`INSERT INTO ledger.holders (holder, seq, digest, status, created_ms, updated_ms, lanes)
				SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::int[])`,
				add.hs, add.seqs, add.digests, add.statuses, add.created, add.updated, add.lanes)
		}
		if len(set.hs) > 0 {
			b.Queue(`UPDATE ledger.holders h SET seq = u.seq, digest = u.digest, status = u.status, updated_ms = u.updated_ms, lanes = u.lanes
				FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::int[]) AS u(holder, seq, digest, status, updated_ms, lanes)
				WHERE h.holder = u.holder`,
				set.hs, set.seqs, set.digests, set.statuses, set.updated, set.lanes)
		}
	}
	if len(w.coupons) > 0 {
		var hs, cs, states, raws []string
		var exps []int64
		for k, raw := range w.coupons {
			st, exp := stored.ParseCoupon(raw)
			hs, cs, states, raws, exps = append(hs, k.holder), append(cs, k.name), append(states, st), append(raws, raw), append(exps, exp)
		}
		b.Queue(`WITH d AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[]) AS d(h, c, st, e, r)),
			s AS (UPDATE ledger.coupons t SET state = d.st, expires_ms = d.e, raw = d.r FROM d
				WHERE t.holder = d.h AND t.coupon = d.c RETURNING t.holder, t.coupon)
			INSERT INTO ledger.coupons (holder, coupon, state, expires_ms, raw)
			SELECT * FROM d WHERE NOT EXISTS (SELECT FROM s WHERE s.holder = d.h AND s.coupon = d.c)`,
			hs, cs, states, exps, raws)
	}
	var openH, openN, openRaw, openCoupons, closedH, closedN []string
	var openExp []int64
	var openLegs []map[string]int64
	for k, raw := range w.holds {
		if raw == nil {
			closedH, closedN = append(closedH, k.holder), append(closedN, k.name)
			continue
		}
		exp, legs, cs, err := stored.ParseHold(*raw)
		if err != nil {
			return err
		}
		openH, openN, openRaw, openExp, openLegs = append(openH, k.holder), append(openN, k.name), append(openRaw, *raw), append(openExp, exp), append(openLegs, legs)
		openCoupons = append(openCoupons, "{"+joinQuoted(cs)+"}")
	}
	if len(openH) > 0 {
		b.Queue(`WITH d AS (SELECT h, n, e, l, c::text[], r FROM unnest($1::text[], $2::text[], $3::bigint[], $4::jsonb[], $5::text[], $6::text[]) AS d(h, n, e, l, c, r)),
			s AS (UPDATE ledger.holds t SET expires_ms = d.e, legs = d.l, coupons = d.c, raw = d.r FROM d
				WHERE t.holder = d.h AND t.hold = d.n RETURNING t.holder, t.hold)
			INSERT INTO ledger.holds (holder, hold, expires_ms, legs, coupons, raw)
			SELECT * FROM d WHERE NOT EXISTS (SELECT FROM s WHERE s.holder = d.h AND s.hold = d.n)`,
			openH, openN, openExp, openLegs, openCoupons, openRaw)
	}
	if len(closedH) > 0 {
		b.Queue(`DELETE FROM ledger.holds d USING unnest($1::text[], $2::text[]) AS u(h, n) WHERE d.holder = u.h AND d.hold = u.n`, closedH, closedN)
	}
	if len(w.unpark) > 0 {
		var hs []string
		var seqs []int64
		for _, u := range w.unpark {
			hs, seqs = append(hs, u[0].(string)), append(seqs, u[1].(int64))
		}
		b.Queue(`DELETE FROM ledger.parked p USING unnest($1::text[], $2::bigint[]) AS u(h, s) WHERE p.holder = u.h AND p.seq = u.s`, hs, seqs)
	}
	// Another event parked at the seq already: the same one delivered again,
	// or, of another digest, a conflict (a forked history), kept in refused
	// as one at or below the head is.
	for _, p := range w.park {
		b.Queue(`WITH ins AS (INSERT INTO ledger.parked (holder, seq, fields) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1)
			INSERT INTO ledger.refused (holder, seq, reason, fields)
			SELECT $1, $2, 'another event is parked at this seq: the holder''s history forked', $3::jsonb
			WHERE NOT EXISTS (SELECT 1 FROM ins) AND NOT EXISTS (SELECT 1 FROM ledger.parked
				WHERE holder = $1 AND seq = $2 AND fields->>'digest' = $3::jsonb->>'digest')`, p...)
	}
	for _, r := range w.refuse {
		b.Queue(`INSERT INTO ledger.refused (holder, seq, reason, fields) VALUES ($1, $2, $3, $4)`, r...)
	}
	// Once: a relay re-delivers what it could not acknowledge, and two sinks
	// may be handed the same event at once (one claimed what the other
	// read). A malformed event is set aside before any holder is locked:
	// a lock on its holder and seq makes the second sink's check see the
	// first's row, once committed. Taken in one order, so that two sinks
	// setting aside several cannot deadlock.
	setAside := slices.Clone(w.setAside) // w.setAside's order is the sink's (its malformed first)
	slices.SortFunc(setAside, func(a, b []any) int {
		return cmp.Or(cmp.Compare(a[0].(string), b[0].(string)), cmp.Compare(a[1].(int64), b[1].(int64)))
	})
	for _, r := range setAside {
		b.Queue(`SELECT pg_advisory_xact_lock($1::int, hashtext($2::text || '/' || $3::bigint))`, setAsideLock, r[0], r[1])
		b.Queue(`INSERT INTO ledger.set_aside (holder, seq, stream, entry, fields, reason)
			SELECT $1::text, $2::bigint, $3::text, $4::text, $5::bytea, $6::text WHERE NOT EXISTS (SELECT 1 FROM ledger.set_aside
				WHERE holder = $1 AND seq = $2 AND fields = $5 AND resolved_at IS NULL)`, r...)
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// joinQuoted renders the elements of a text[] literal.
func joinQuoted(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += `"` + s + `"` // ids match [A-Za-z0-9_.:-]: nothing to escape
	}
	return out
}

// headColumns are holders' heads as the columns of ledger.holders.
type headColumns struct {
	hs, digests, statuses  []string
	seqs, created, updated []int64
	lanes                  []int32
}

func (c *headColumns) add(h string, hd head) {
	c.hs, c.digests, c.statuses = append(c.hs, h), append(c.digests, hd.digest), append(c.statuses, hd.status)
	c.seqs, c.created, c.updated = append(c.seqs, hd.seq), append(c.created, hd.createdMs), append(c.updated, hd.updatedMs)
	c.lanes = append(c.lanes, int32(max(hd.lanes, 1)))
}

// accountColumns are accounts' changes as the columns of ledger.accounts.
type accountColumns struct{ owners, kinds, assets, amounts []string }

func (c *accountColumns) add(k acctKey, amount string) {
	c.owners, c.kinds, c.assets, c.amounts = append(c.owners, k.owner), append(c.kinds, k.kind), append(c.assets, k.asset), append(c.amounts, amount)
}
