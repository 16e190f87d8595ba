package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// Holders lists every holder of the ledger, sorted.
func (l *Ledger) Holders(ctx context.Context) ([]string, error) {
	rows, err := l.pool.Query(ctx, "SELECT holder FROM ledger.holders ORDER BY holder")
	if err != nil {
		return nil, fmt.Errorf("ledger holders: %w", err)
	}
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Snapshots reads the state of holders; a holder the ledger lacks is absent
// from the map. Each snapshot's Recent lists the holder's instructions
// applied at or after since (Unix ms, compared with the events' server time),
// the latest per id; since <= 0 reads none (reconciliation compares state
// only).
func (l *Ledger) Snapshots(ctx context.Context, holders []string, since int64) (map[string]*stored.Snapshot, error) {
	out := map[string]*stored.Snapshot{}
	// One transaction: the reads see the same commit, so Recent ends at Seq.
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger snapshots: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return nil, fmt.Errorf("ledger snapshots: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT holder, status, seq, digest, created_ms, lanes FROM ledger.holders WHERE holder = ANY($1)`, holders)
	if err != nil {
		return nil, fmt.Errorf("ledger snapshots: %w", err)
	}
	for rows.Next() {
		s := &stored.Snapshot{Balances: map[string][2]int64{}, Coupons: map[string]string{}, Holds: map[string]string{}}
		if err := rows.Scan(&s.Holder, &s.Status, &s.Seq, &s.Digest, &s.CreatedMs, &s.Lanes); err != nil {
			return nil, err
		}
		if s.Lanes < 2 {
			s.Lanes = 0 // a plain holder, as the engine reads one without the field
		}
		out[s.Holder] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger snapshots: %w", err)
	}
	rows, err = tx.Query(ctx, snapshotAccountsQuery, holders)
	if err != nil {
		return nil, fmt.Errorf("ledger snapshots: %w", err)
	}
	for rows.Next() {
		var h, kind, asset string
		var n int64
		if err := rows.Scan(&h, &kind, &asset, &n); err != nil {
			return nil, err
		}
		s := out[h]
		if s == nil {
			continue
		}
		i := 0
		if kind == stored.SideFrozen {
			i = 1
		}
		if asset == stored.PointsAsset {
			if s.Points == nil {
				s.Points = &[2]int64{}
			}
			s.Points[i] = n
			continue
		}
		b := s.Balances[asset]
		b[i] = n
		s.Balances[asset] = b
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger snapshots: %w", err)
	}
	for _, q := range []struct {
		sql string
		put func(s *stored.Snapshot, name, raw string)
	}{
		{snapshotCouponsQuery, func(s *stored.Snapshot, n, r string) { s.Coupons[n] = r }},
		{"SELECT holder, hold, raw FROM ledger.holds WHERE holder = ANY($1)", func(s *stored.Snapshot, n, r string) { s.Holds[n] = r }},
	} {
		rows, err := tx.Query(ctx, q.sql, holders)
		if err != nil {
			return nil, fmt.Errorf("ledger snapshots: %w", err)
		}
		for rows.Next() {
			var h, name, raw string
			if err := rows.Scan(&h, &name, &raw); err != nil {
				return nil, err
			}
			if s := out[h]; s != nil {
				q.put(s, name, raw)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("ledger snapshots: %w", err)
		}
	}
	if since > 0 {
		if err := readRecent(ctx, tx, holders, since, out); err != nil {
			return nil, fmt.Errorf("ledger snapshots: %w", err)
		}
		if err := readLanesHist(ctx, tx, out, since); err != nil {
			return nil, fmt.Errorf("ledger snapshots: %w", err)
		}
	}
	return out, nil
}

// readLanesHist fills the LanesHist of the hot holders' lane 0 among out:
// for each raise since the cut-off, the count it raised, with its server
// time, as the library's set_lanes keeps them ("<count>@<ms>;"), from the
// holder's open and set_lanes events (the counts before the cut-off tell
// what the first raise after it raised).
func readLanesHist(ctx context.Context, tx pgx.Tx, out map[string]*stored.Snapshot, since int64) error {
	var hot []string
	for h, s := range out {
		if _, lane := instructions.ParentOf(h); s.Lanes > 1 && lane == 0 {
			hot = append(hot, h)
		}
	}
	if len(hot) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT holder, ts_ms, ledger.event_ops(ops) FROM ledger.events
		WHERE holder = ANY($1) AND (ops LIKE '%"op":"set_lanes"%' OR ops LIKE '%"op":"open"%') ORDER BY holder, seq`, hot)
	if err != nil {
		return err
	}
	defer rows.Close()
	count := map[string]int64{}
	for rows.Next() {
		var h, text string
		var ts int64
		if err := rows.Scan(&h, &ts, &text); err != nil {
			return err
		}
		var ops []stored.EventOp
		if err := json.Unmarshal([]byte(text), &ops); err != nil {
			return fmt.Errorf("holder %s: the ops of an event: %w", h, err)
		}
		for _, op := range ops {
			n, _ := strconv.ParseInt(op.Units, 10, 64)
			cur := max(count[h], 1)
			switch {
			case op.Op == instructions.OpOpen && n > 0:
				count[h] = n
			case op.Op == instructions.OpSetLanes && n > cur:
				if ts >= since {
					out[h].LanesHist += strconv.FormatInt(cur, 10) + "@" + strconv.FormatInt(ts, 10) + ";"
				}
				count[h] = n
			}
		}
	}
	return rows.Err()
}

// accounts holds a counterparty account per transfer and asset (its clearing
// account), and coupons every coupon ever granted: both grow with history.
// Given "holder = ANY($1)" over a batch of holders, the planner may scan the
// whole table; a lateral probe per holder (OFFSET 0 keeps it from being
// flattened into a join) reads only the batch's rows by the primary key.
const (
	snapshotAccountsQuery = `SELECT a.holder, a.kind, a.asset, a.amount::bigint FROM unnest($1::text[]) AS u(holder)
		CROSS JOIN LATERAL (SELECT * FROM ledger.accounts a WHERE a.holder = u.holder AND a.kind <> 'cp' OFFSET 0) a`
	snapshotCouponsQuery = `SELECT c.holder, c.coupon, c.raw FROM unnest($1::text[]) AS u(holder)
		CROSS JOIN LATERAL (SELECT * FROM ledger.coupons c WHERE c.holder = u.holder OFFSET 0) c`
)

// readRecent fills the snapshots' Recent. An id is unique per holder within
// the idempotency TTL, but not forever (Redis forgets it after the TTL), so
// only its latest instruction counts: that is the one Redis would replay.
func readRecent(ctx context.Context, tx pgx.Tx, holders []string, since int64, out map[string]*stored.Snapshot) error {
	rows, err := tx.Query(ctx, `SELECT holder, id, fp, ts_ms, state FROM (
			SELECT DISTINCT ON (holder, id) holder, seq, id, fp, ts_ms, state FROM ledger.events
			WHERE holder = ANY($1) AND ts_ms >= $2 ORDER BY holder, id, seq DESC) AS latest
		ORDER BY holder, seq`, holders, since)
	if err != nil {
		return err
	}
	for rows.Next() {
		var h string
		var r stored.RecentInstruction
		if err := rows.Scan(&h, &r.ID, &r.FP, &r.TsMs, &r.State); err != nil {
			return err
		}
		if s := out[h]; s != nil {
			s.Recent = append(s.Recent, r)
		}
	}
	return rows.Err()
}

// Arrived is what the ledger has received of a holder's events: those
// applied, up to Head, and those parked behind a gap.
type Arrived struct {
	Head   int64
	Parked map[int64]bool
}

// Has tells whether the ledger has received the event at seq.
func (a Arrived) Has(seq int64) bool { return seq <= a.Head || a.Parked[seq] }

// Arrivals reads what the ledger has received of holders' events, in one
// statement (one view of the commits); a holder it knows nothing of is
// absent from the map.
func (l *Ledger) Arrivals(ctx context.Context, holders []string) (map[string]Arrived, error) {
	out := map[string]Arrived{}
	rows, err := l.pool.Query(ctx, `SELECT holder, seq, false FROM ledger.holders WHERE holder = ANY($1)
		UNION ALL SELECT holder, seq, true FROM ledger.parked WHERE holder = ANY($1)`, holders)
	if err != nil {
		return nil, fmt.Errorf("ledger arrivals: %w", err)
	}
	for rows.Next() {
		var h string
		var seq int64
		var parked bool
		if err := rows.Scan(&h, &seq, &parked); err != nil {
			return nil, fmt.Errorf("ledger arrivals: %w", err)
		}
		a := out[h]
		if parked {
			if a.Parked == nil {
				a.Parked = map[int64]bool{}
			}
			a.Parked[seq] = true
		} else {
			a.Head = seq
		}
		out[h] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger arrivals: %w", err)
	}
	return out, nil
}
