-- How far reconciliation has audited the books (every instruction's entries
-- sum to zero per asset; every account is the sum of its entries), so that
-- each run reads only the entries written since the last clean one.
-- audited: per holder, the seq up to which its instructions' entries were
-- audited. audited_accounts: per account, the sum of the entries audited so
-- far (absent: zero, so that settled clearing accounts take no room).
-- Emptying both makes the next audit read the whole history again.
CREATE TABLE ledger.audited (
	holder text PRIMARY KEY,
	seq    bigint NOT NULL
);

CREATE TABLE ledger.audited_accounts (
	holder text NOT NULL,
	kind   text NOT NULL,
	asset  text NOT NULL,
	amount numeric NOT NULL,
	PRIMARY KEY (holder, kind, asset)
);

-- While this table has a row, the next audit reads the whole history: on a
-- new or upgraded ledger, and after anything but the sink wrote entries or
-- accounts (an edit by hand, a restore), which may have changed what lies
-- below the marks. A clean audit of the whole history empties it.
CREATE TABLE ledger.audit_full (
	reason text NOT NULL,
	at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ledger.audit_full (reason) VALUES ('first audit');

-- The sink says who it is (SET LOCAL atomledger.writer = 'sink') in each of
-- its transactions; any other statement on entries or accounts asks for a
-- whole audit. Once per statement, not per row: nothing for the sink's COPY.
CREATE FUNCTION ledger.books_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('atomledger.writer', true) IS DISTINCT FROM 'sink' THEN
		INSERT INTO ledger.audit_full (reason) VALUES (TG_OP || ' on ledger.' || TG_TABLE_NAME || ' outside the sink');
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER entries_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ledger.entries
	FOR EACH STATEMENT EXECUTE FUNCTION ledger.books_written();
CREATE TRIGGER accounts_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ledger.accounts
	FOR EACH STATEMENT EXECUTE FUNCTION ledger.books_written();
