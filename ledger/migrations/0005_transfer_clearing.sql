-- The transfers whose clearing account is not zero, without reading history.
-- One row per transfer and asset whose clearing sum (the sum of the cp
-- entries of the transfer's parts, as ledger.transfer_balances computes it)
-- is not zero: the sink adds each batch's sums in the same transaction as
-- its entries and deletes a row once it reaches zero, so the table holds
-- only the transfers some of whose commits are in and others not.
-- Reconciliation reads it; the view stays for looking at any transfer.
CREATE TABLE ledger.transfer_clearing (
	transfer text NOT NULL,
	asset    text NOT NULL,
	clearing numeric NOT NULL, -- never 0 once a batch commits (no CHECK: a batch reaches it, then deletes the row)
	PRIMARY KEY (transfer, asset)
);

-- A ledger that already holds transfers: the sums of what it has.
INSERT INTO ledger.transfer_clearing (transfer, asset, clearing)
SELECT i.transfer, e.asset, sum(e.amount)
FROM ledger.instructions i JOIN ledger.entries e USING (holder, seq)
WHERE i.transfer IS NOT NULL AND e.account_kind = 'cp'
GROUP BY i.transfer, e.asset
HAVING sum(e.amount) <> 0;
