-- Cross-holder transfers. Each part of a transfer is an instruction of its own
-- on its holder (prepare "x:<id>:p", then commit "x:<id>:c" or abort
-- "x:<id>:a"), and its event names the transfer (xfer). The parts'
-- counterparty is the transfer's clearing account "x:<id>": a commit settles
-- what its part gives into it and credits what its part gets out of it.

-- The transfer a part belongs to; NULL for an ordinary instruction.
ALTER TABLE ledger.instructions ADD COLUMN transfer text;
CREATE INDEX instructions_transfer ON ledger.instructions (transfer) WHERE transfer IS NOT NULL;

-- A transfer as the ledger has it, one row per asset its parts moved (asset
-- NULL when they moved nothing yet). The parts of a transfer are one
-- balanced transaction: net, the sum of all their entries, is zero per
-- asset, and once every part's commit is in, so is clearing, the sum of the
-- entries of the clearing account. A non-zero clearing means that commits
-- of some parts are in the ledger and others are not (yet). prepared,
-- committed and aborted count the parts whose step is in; holders are those
-- with any part in.
CREATE VIEW ledger.transfer_balances AS
WITH parts AS (
	SELECT transfer,
		count(*) FILTER (WHERE id LIKE '%:p') AS prepared,
		count(*) FILTER (WHERE id LIKE '%:c') AS committed,
		count(*) FILTER (WHERE id LIKE '%:a') AS aborted,
		array_agg(DISTINCT holder ORDER BY holder) AS holders,
		min(ts_ms) AS first_ms
	FROM ledger.instructions
	WHERE transfer IS NOT NULL
	GROUP BY transfer
), sums AS (
	-- A part's counterparty is the clearing account: its cp entries are that
	-- account's.
	SELECT i.transfer, e.asset,
		coalesce(sum(e.amount) FILTER (WHERE e.account_kind = 'cp'), 0) AS clearing,
		sum(e.amount) AS net
	FROM ledger.instructions i JOIN ledger.entries e USING (holder, seq)
	WHERE i.transfer IS NOT NULL
	GROUP BY i.transfer, e.asset
)
SELECT p.transfer, s.asset, coalesce(s.clearing, 0) AS clearing, coalesce(s.net, 0) AS net,
	p.prepared, p.committed, p.aborted, p.holders, p.first_ms
FROM parts p LEFT JOIN sums s USING (transfer);
