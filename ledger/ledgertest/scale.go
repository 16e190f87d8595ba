package ledgertest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// FillScale writes, straight into the ledger's tables, what the sink writes
// for holders holders (each opened with a credit of 1000.00 CNY) and
// transfers payments between them, of which the last open ones lack their
// payee's commit (their clearing account holds what the payer gave).
// Transfer j: payer j mod holders, payee the next holder, 1.00 CNY, in four
// instructions as the two-phase protocol writes them (the payer's prepare
// freezes under the hold x:<id> and its commit settles it into the clearing
// account; the payee's prepare moves nothing, its commit credits from it):
// six entries. transfers must be a multiple of holders, open at most
// holders.
func FillScale(ctx context.Context, pool *pgxpool.Pool, holders, transfers, open int) error {
	if holders <= 0 || transfers%holders != 0 || open > min(holders, transfers) {
		return fmt.Errorf("fill: %d transfers must be a multiple of %d holders, and %d open at most either", transfers, holders, open)
	}
	const credit, amount = 100000, 100
	rounds := transfers / holders
	// The payees of the open transfers lack their last instruction.
	openPayee := fmt.Sprintf("((h + %[1]d - 1) %% %[1]d >= %[1]d - %[2]d AND %[3]d > 0)", holders, open, rounds)
	stmts := []string{
		// Each holder: seq 1 opens and credits.
		fmt.Sprintf(`INSERT INTO ledger.instructions (holder, seq, id, fp, ts_ms, counterparty, memo, ops, state, digest, transfer, dv)
		SELECT 'h' || lpad(h::text, 7, '0'), 1, 'open-' || h, decode(md5('fp' || h), 'hex'), 1700000000000 + h, 'external', '',
			'[{"op":"open"},{"op":"credit","asset":"CNY","units":"%[2]d","mv":[["CNY","cp","avail","%[2]d"]]}]',
			'{"s":"1","st":"active","b":{"CNY":["%[2]d","0"]},"c":{},"h":{},"p":["0","0"]}',
			decode(md5('d' || h), 'hex'), NULL, 2
		FROM generate_series(0, %[1]d - 1) AS h`, holders, credit),
		fmt.Sprintf(`INSERT INTO ledger.entries (holder, seq, n, op_index, account, account_kind, asset, amount)
		SELECT 'h' || lpad(h::text, 7, '0'), 1, n, 1, CASE n WHEN 0 THEN 'external' ELSE 'h' || lpad(h::text, 7, '0') END,
			CASE n WHEN 0 THEN 'cp' ELSE 'avail' END, 'CNY', CASE n WHEN 0 THEN -%[2]d ELSE %[2]d END
		FROM generate_series(0, %[1]d - 1) AS h, generate_series(0, 1) AS n`, holders, credit),
		// Transfer j in round r = j / holders: the payer's prepare and
		// commit at seq 2+4r and 3+4r, the payee's at 4+4r and 5+4r.
		fmt.Sprintf(`INSERT INTO ledger.instructions (holder, seq, id, fp, ts_ms, counterparty, memo, ops, state, digest, transfer, dv)
		SELECT 'h' || lpad(p.h::text, 7, '0'), p.seq, 'x:pay-' || j || p.step, decode(md5('fp' || j || p.step), 'hex'), 1700000000000 + %[1]d + j,
			'x:pay-' || j, '', p.ops, '{"s":"' || p.seq || '","b":{"CNY":["%[3]d","0"]},"h":{}}',
			decode(md5('d' || j || p.step), 'hex'), 'pay-' || j, 2
		FROM generate_series(0, %[2]d - 1) AS j, LATERAL (VALUES
			(j %% %[1]d, 2 + 4 * (j / %[1]d), ':p', '[{"op":"check","hold":"x:pay-' || j || '"},{"op":"freeze","asset":"CNY","units":"%[4]d","hold":"x:pay-' || j || '","mv":[["CNY","avail","frozen","%[4]d"]]}]'),
			(j %% %[1]d, 3 + 4 * (j / %[1]d), ':c', '[{"op":"settle","hold":"x:pay-' || j || '","mv":[["CNY","frozen","cp","%[4]d"]]}]'),
			((j + 1) %% %[1]d, 4 + 4 * (j / %[1]d), ':p', '[{"op":"check","hold":"x:pay-' || j || '","asset":"CNY","units":"%[4]d"}]'),
			((j + 1) %% %[1]d, 5 + 4 * (j / %[1]d), ':c', '[{"op":"credit","asset":"CNY","units":"%[4]d","mv":[["CNY","cp","avail","%[4]d"]]}]')
		) AS p(h, seq, step, ops)
		WHERE NOT (j >= %[2]d - %[5]d AND p.seq = 5 + 4 * (j / %[1]d))`, holders, transfers, credit, amount, open),
		fmt.Sprintf(`INSERT INTO ledger.entries (holder, seq, n, op_index, account, account_kind, asset, amount)
		SELECT 'h' || lpad(e.h::text, 7, '0'), e.seq, e.n, e.op, CASE e.kind WHEN 'cp' THEN 'x:pay-' || j ELSE 'h' || lpad(e.h::text, 7, '0') END,
			e.kind, 'CNY', e.amount
		FROM generate_series(0, %[2]d - 1) AS j, LATERAL (VALUES
			(j %% %[1]d, 2 + 4 * (j / %[1]d), 0, 1, 'avail', -%[3]d), (j %% %[1]d, 2 + 4 * (j / %[1]d), 1, 1, 'frozen', %[3]d),
			(j %% %[1]d, 3 + 4 * (j / %[1]d), 0, 0, 'frozen', -%[3]d), (j %% %[1]d, 3 + 4 * (j / %[1]d), 1, 0, 'cp', %[3]d),
			((j + 1) %% %[1]d, 5 + 4 * (j / %[1]d), 0, 0, 'cp', -%[3]d), ((j + 1) %% %[1]d, 5 + 4 * (j / %[1]d), 1, 0, 'avail', %[3]d)
		) AS e(h, seq, n, op, kind, amount)
		WHERE NOT (j >= %[2]d - %[4]d AND e.seq = 5 + 4 * (j / %[1]d))`, holders, transfers, amount, open),
		fmt.Sprintf(`INSERT INTO ledger.holders (holder, seq, digest, status, created_ms, updated_ms)
		SELECT 'h' || lpad(h::text, 7, '0'), 1 + 4 * %[2]d - CASE WHEN %[3]s THEN 1 ELSE 0 END, md5('head' || h) || 'abcdefgh', 'active',
			1700000000000 + h, 1700000000000 + h
		FROM generate_series(0, %[1]d - 1) AS h`, holders, rounds, openPayee),
		fmt.Sprintf(`INSERT INTO ledger.accounts (holder, kind, asset, amount)
		SELECT 'h' || lpad(h::text, 7, '0'), k.kind, 'CNY', CASE WHEN k.kind = 'frozen' THEN 0 WHEN %[4]s THEN %[2]d - %[3]d ELSE %[2]d END
		FROM generate_series(0, %[1]d - 1) AS h, (VALUES ('avail'), ('frozen')) AS k(kind)
		WHERE k.kind = 'avail' OR %[5]d > 0`, holders, credit, amount, openPayee, rounds),
		fmt.Sprintf(`INSERT INTO ledger.accounts (holder, kind, asset, amount) VALUES ('external', 'cp', 'CNY', -%d::numeric * %d)`, credit, holders),
	}
	var clearing bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('ledger.transfer_clearing') IS NOT NULL").Scan(&clearing); err != nil {
		return err
	}
	if clearing {
		// What the sink keeps of the open transfers, their clearing
		// accounts' amounts; the settled ones left it.
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO ledger.transfer_clearing (transfer, asset, clearing)
			SELECT 'pay-' || j, 'CNY', %[3]d FROM generate_series(%[1]d - %[2]d, %[1]d - 1) AS j`, transfers, open, amount))
	} else {
		// Before migration 5, ledger.accounts held every clearing account.
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO ledger.accounts (holder, kind, asset, amount)
			SELECT 'x:pay-' || j, 'cp', 'CNY', CASE WHEN j >= %[1]d - %[2]d THEN %[3]d ELSE 0 END FROM generate_series(0, %[1]d - 1) AS j`, transfers, open, amount))
	}
	stmts = append(stmts, "VACUUM ANALYZE")
	for _, s := range stmts {
		if _, err := pool.Exec(ctx, s); err != nil {
			return fmt.Errorf("fill: %w: %s", err, s)
		}
	}
	return nil
}
