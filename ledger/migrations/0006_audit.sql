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
