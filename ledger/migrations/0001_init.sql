-- The ledger: holders, their accounts, the instructions that changed them,
-- the double entries of each instruction, and coupons and holds.

CREATE TABLE ledger.holders (
	holder      text PRIMARY KEY,
	seq         bigint NOT NULL CHECK (seq >= 1),
	digest      text NOT NULL,
	status      text NOT NULL CHECK (status IN ('active', 'suspended')),
	created_ms  bigint NOT NULL,
	updated_ms  bigint NOT NULL
);

-- One row per applied instruction: the event's fields as Redis wrote them,
-- ops and state verbatim so that the digest chain can be checked again. fp
-- (the request fingerprint) and state (the result the client got) are also
-- what a rebuild needs to write the instruction's idempotency record again.
CREATE TABLE ledger.instructions (
	holder       text NOT NULL,
	seq          bigint NOT NULL,
	id           text NOT NULL,
	fp           text NOT NULL,
	ts_ms        bigint NOT NULL,
	counterparty text NOT NULL,
	memo         text NOT NULL,
	ops          text NOT NULL,
	state        text NOT NULL,
	digest       text NOT NULL,
	PRIMARY KEY (holder, seq)
);
CREATE INDEX instructions_id ON ledger.instructions (holder, id);

-- kind: avail or frozen (of holder), or cp (holder is then the counterparty's
-- name). Points are the asset 'points'. Counterparty balances are unbounded
-- sums, hence numeric.
CREATE TABLE ledger.accounts (
	holder text NOT NULL,
	kind   text NOT NULL CHECK (kind IN ('avail', 'frozen', 'cp')),
	asset  text NOT NULL,
	amount numeric NOT NULL,
	PRIMARY KEY (holder, kind, asset)
);

-- The double entries: amount > 0 arrives at the account, < 0 leaves it.
-- (holder, seq) is the instruction; n numbers its entries.
CREATE TABLE ledger.entries (
	holder        text NOT NULL,
	seq           bigint NOT NULL,
	n             int NOT NULL,
	op_index      int NOT NULL,
	account       text NOT NULL,
	account_kind  text NOT NULL,
	asset         text NOT NULL,
	amount        bigint NOT NULL CHECK (amount <> 0),
	PRIMARY KEY (holder, seq, n)
);

-- Coupons and open holds, in Redis's stored form (raw) and parsed.
CREATE TABLE ledger.coupons (
	holder     text NOT NULL,
	coupon     text NOT NULL,
	state      text NOT NULL,
	expires_ms bigint NOT NULL,
	raw        text NOT NULL,
	PRIMARY KEY (holder, coupon)
);

CREATE TABLE ledger.holds (
	holder     text NOT NULL,
	hold       text NOT NULL,
	expires_ms bigint NOT NULL,
	legs       jsonb NOT NULL,
	coupons    text[] NOT NULL,
	raw        text NOT NULL,
	PRIMARY KEY (holder, hold)
);

-- Events that arrived before the ones they follow: applied once the gap fills.
CREATE TABLE ledger.parked (
	holder    text NOT NULL,
	seq       bigint NOT NULL,
	fields    jsonb NOT NULL,
	parked_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (holder, seq)
);

-- Events the sink would not apply: a digest that does not chain, a duplicate
-- that differs from what was applied, a malformed event.
CREATE TABLE ledger.refused (
	id          bigserial PRIMARY KEY,
	holder      text NOT NULL,
	seq         bigint NOT NULL,
	reason      text NOT NULL,
	fields      jsonb NOT NULL,
	refused_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refused_holder ON ledger.refused (holder, seq);
