-- A holder's own accounts (avail, frozen) hold what Redis holds, and Redis
-- keeps every stored value in 0 .. 2^53-1 (DESIGN.md, Amounts). An event
-- that would take one outside (written straight into an outbox: the library
-- refuses it) is refused here, as a check violation, and set aside instead
-- of applied: past 2^63-1 no snapshot of the holders read with it could be
-- read, and reconcile and rebuild failed for every one of them.
--
-- A trigger after the write, not a CHECK: the sink upserts each batch's
-- sum (INSERT ... ON CONFLICT DO UPDATE), and a CHECK judges the row the
-- INSERT proposes (the sum alone, below zero for a debit) before the
-- conflict turns it into an update. The WHEN clause keeps the trigger's
-- cost to the rows out of range. The rows already there are not read again.
CREATE FUNCTION ledger.own_account_out_of_range() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION USING ERRCODE = 'check_violation', CONSTRAINT = 'accounts_own_in_range',
		MESSAGE = format('account %s of %s in %s would be %s: a holder''s own account stays within 0 .. 2^53-1',
			NEW.kind, NEW.holder, NEW.asset, NEW.amount);
END
$$;
CREATE TRIGGER accounts_own_in_range AFTER INSERT OR UPDATE ON ledger.accounts FOR EACH ROW
	WHEN (NEW.kind <> 'cp' AND (NEW.amount < 0 OR NEW.amount > 9007199254740991))
	EXECUTE FUNCTION ledger.own_account_out_of_range();
