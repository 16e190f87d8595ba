-- A smaller ledger: what a row can be derived from other fields of it, or
-- from other rows, is not stored again (docs/ledger.md, "What a payment
-- costs"). The view ledger.events gives every event back as Redis wrote it.
-- A ledger written before is converted in place: one rewrite of
-- ledger.instructions and one of ledger.entries.
--
-- Nothing here changes a sum: the sink's mark keeps the books' triggers
-- (migration 6) from asking for a whole audit.
SET LOCAL atomledger.writer = 'sink';

-- ops and state, JSON as Redis wrote it (the digest covers their text), are
-- stored compactly where part of them repeats what the row says, marked by
-- a first character JSON never begins with. These functions give the text
-- back; the sink (ledger/compact.go) writes only what they read back
-- exactly.
--
-- ops, marked '*': a debit's or credit's movement ("mv") is left out, its
-- one movement being its asset and units between the available balance and
-- the counterparty, in its op's direction.
CREATE FUNCTION ledger.event_ops(ops text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT CASE WHEN left(ops, 1) = '*' THEN
		regexp_replace(regexp_replace(substr(ops, 2),
			'\{"op":"debit","asset":"([A-Z0-9_]+)","units":"([0-9]+)"\}',
			'{"op":"debit","asset":"\1","units":"\2","mv":[["\1","avail","cp","\2"]]}', 'g'),
			'\{"op":"credit","asset":"([A-Z0-9_]+)","units":"([0-9]+)"\}',
			'{"op":"credit","asset":"\1","units":"\2","mv":[["\1","cp","avail","\2"]]}', 'g')
	ELSE ops END
$$;

-- state, marked '*': its head {"s":"<seq>","st":"active", left out; marked
-- '~': that head and its tail ,"c":{},"h":{}} (no coupon or hold touched).
CREATE FUNCTION ledger.event_state(seq bigint, state text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT CASE left(state, 1)
		WHEN '*' THEN '{"s":"' || seq || '","st":"active",' || substr(state, 2)
		WHEN '~' THEN '{"s":"' || seq || '","st":"active",' || substr(state, 2) || ',"c":{},"h":{}}'
		ELSE state END
$$;

-- The conversion of the rows already written, as the sink writes new ones:
-- each kept whole unless the functions above give its text back.
CREATE FUNCTION pg_temp.compact_ops(ops text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT CASE WHEN c <> ops AND ledger.event_ops('*' || c) = ops THEN '*' || c ELSE ops END
	FROM (SELECT regexp_replace(regexp_replace(ops,
		'\{"op":"debit","asset":"([A-Z0-9_]+)","units":"([0-9]+)","mv":\[\["\1","avail","cp","\2"\]\]\}',
		'{"op":"debit","asset":"\1","units":"\2"}', 'g'),
		'\{"op":"credit","asset":"([A-Z0-9_]+)","units":"([0-9]+)","mv":\[\["\1","cp","avail","\2"\]\]\}',
		'{"op":"credit","asset":"\1","units":"\2"}', 'g') AS c) AS c
$$;
CREATE FUNCTION pg_temp.compact_state(seq bigint, state text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT CASE
		WHEN left(state, length(head)) <> head THEN state
		WHEN length(state) > length(head) + 15 AND right(state, 15) = ',"c":{},"h":{}}'
			THEN '~' || substr(state, length(head) + 1, length(state) - length(head) - 15)
		ELSE '*' || substr(state, length(head) + 1) END
	FROM (SELECT '{"s":"' || seq || '","st":"active",' AS head) AS h
$$;

-- A transfer part's id is x:<transfer>:p, :c or :a (its step), its
-- counterparty the clearing account x:<transfer>, its memo "transfer
-- <transfer>: prepare", "commit" or "abort" after its step: when they are
-- just that, the id is stored as its step alone (":c") and the other two as
-- '' (a counterparty is never empty).
CREATE FUNCTION pg_temp.part_derived(id text, counterparty text, memo text, transfer text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
	SELECT transfer IS NOT NULL AND counterparty = 'x:' || transfer
		AND id IN ('x:' || transfer || ':p', 'x:' || transfer || ':c', 'x:' || transfer || ':a')
		AND memo = 'transfer ' || transfer || ': ' || CASE right(id, 1) WHEN 'p' THEN 'prepare' WHEN 'c' THEN 'commit' ELSE 'abort' END
$$;

-- The fingerprint and the digest are hexadecimal (docs/events.md): stored
-- as the bytes they spell, half the size. A row written by hand that is not
-- stops the migration, which then changes nothing, naming the rows to mend.
DO $$
DECLARE
	bad text;
BEGIN
	SELECT string_agg(holder || '/' || seq, ', ') INTO bad FROM (
		SELECT holder, seq FROM ledger.instructions
		WHERE fp !~ '^([0-9a-f]{2})*$' OR digest !~ '^([0-9a-f]{2})*$' ORDER BY holder, seq LIMIT 10) AS b;
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'ledger.instructions: fp or digest not lowercase hexadecimal at (holder/seq) %; mend them and start again', bad;
	END IF;
END
$$;

-- A transfer part's id is found through its transfer (instructions_transfer):
-- the index by id keeps the other instructions only. The view over id goes
-- while its column is rewritten, and comes back as it was (migration 2).
DROP INDEX ledger.instructions_id;
DROP VIEW ledger.transfer_balances;
ALTER TABLE ledger.instructions
	ALTER COLUMN id TYPE text USING CASE WHEN pg_temp.part_derived(id, counterparty, memo, transfer) THEN right(id, 2) ELSE id END,
	ALTER COLUMN counterparty TYPE text USING CASE WHEN pg_temp.part_derived(id, counterparty, memo, transfer) THEN '' ELSE counterparty END,
	ALTER COLUMN memo TYPE text USING CASE WHEN pg_temp.part_derived(id, counterparty, memo, transfer) THEN '' ELSE memo END,
	ALTER COLUMN ops TYPE text USING pg_temp.compact_ops(ops),
	ALTER COLUMN state TYPE text USING pg_temp.compact_state(seq, state),
	ALTER COLUMN fp TYPE bytea USING decode(fp, 'hex'),
	ALTER COLUMN digest TYPE bytea USING decode(digest, 'hex');
CREATE INDEX instructions_id ON ledger.instructions (holder, id) WHERE transfer IS NULL;

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

-- Each instruction's event with every field as Redis wrote it: what a
-- digest is checked on, what statements and rebuilds read.
CREATE VIEW ledger.events AS
SELECT holder, seq,
	CASE WHEN counterparty = '' AND transfer IS NOT NULL THEN 'x:' || transfer || id ELSE id END AS id,
	encode(fp, 'hex') AS fp, ts_ms,
	CASE WHEN counterparty = '' AND transfer IS NOT NULL THEN 'x:' || transfer ELSE counterparty END AS counterparty,
	CASE WHEN counterparty = '' AND transfer IS NOT NULL
		THEN 'transfer ' || transfer || ': ' || CASE right(id, 1) WHEN 'p' THEN 'prepare' WHEN 'c' THEN 'commit' ELSE 'abort' END
		ELSE memo END AS memo,
	ledger.event_ops(ops) AS ops, ledger.event_state(seq, state) AS state, encode(digest, 'hex') AS digest, transfer, dv
FROM ledger.instructions;

-- An entry on the holder's own account (avail, frozen) names no account:
-- NULL is the holder. n and op_index fit in smallint (64 ops at most).
--
-- The entries of an instruction are found by (holder, seq): an index on
-- that alone, where an instruction's entries share one key (B-tree
-- deduplication keeps one key and a list of rows), instead of a key per
-- entry. The sink writes an instruction's entries once, under its holder's
-- lock; the audit finds any entry written twice (its account drifts).
ALTER TABLE ledger.entries DROP CONSTRAINT entries_pkey;
ALTER TABLE ledger.entries ALTER COLUMN account DROP NOT NULL;
ALTER TABLE ledger.entries
	ALTER COLUMN n TYPE smallint,
	ALTER COLUMN op_index TYPE smallint,
	ALTER COLUMN account TYPE text USING CASE WHEN account_kind <> 'cp' AND account = holder THEN NULL ELSE account END;
CREATE INDEX entries_instruction ON ledger.entries (holder, seq);

-- A transfer's clearing account x:<transfer> has its amount in
-- ledger.transfer_clearing already (the sum of its entries, where not
-- zero): ledger.accounts no longer holds it again, and every settled
-- transfer's row there, zero for good, goes. An account without a row is
-- zero. ledger.account_amounts gives every account's amount.
UPDATE ledger.accounts a SET amount = a.amount - c.clearing FROM ledger.transfer_clearing c
WHERE a.kind = 'cp' AND a.holder = 'x:' || c.transfer AND a.asset = c.asset;
DELETE FROM ledger.accounts WHERE kind = 'cp' AND holder LIKE 'x:%' AND amount = 0;

CREATE VIEW ledger.account_amounts AS
SELECT holder, kind, asset, sum(amount) AS amount FROM (
	SELECT holder, kind, asset, amount FROM ledger.accounts
	UNION ALL
	SELECT 'x:' || transfer, 'cp', asset, clearing FROM ledger.transfer_clearing) AS a
GROUP BY holder, kind, asset;

-- transfer_clearing now holds the clearing accounts' amounts: a write there
-- by anything but the sink asks for a whole audit too (migration 6).
CREATE TRIGGER transfer_clearing_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ledger.transfer_clearing
	FOR EACH STATEMENT EXECUTE FUNCTION ledger.books_written();

DROP FUNCTION pg_temp.compact_ops(text);
DROP FUNCTION pg_temp.compact_state(bigint, text);
DROP FUNCTION pg_temp.part_derived(text, text, text, text);
