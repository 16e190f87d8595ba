-- The feed (docs/feed.md): every holder's applied instructions in one order,
-- which a reader may follow by a cursor without ever missing one. xid is the
-- writing transaction's id: the sink's COPY leaves the column out, so its
-- default fills it, and every event a batch writes has its batch's xid. The
-- feed orders events by (xid, holder, seq) and hands out only those whose
-- xid is below the xmin of its snapshot: no transaction still in flight can
-- then commit an event before them.
--
-- Added without a default first, so that the rows already there stay NULL
-- (no rewrite of the table): they are the history before the feed, which it
-- gives first, by (holder, seq), through the second index (empty on a new
-- ledger; no new row enters it).
--
-- The feed's index holds xid alone: the events of one batch share one key,
-- and the feed sorts a batch's events by (holder, seq) as it reads them.
ALTER TABLE ledger.instructions ADD COLUMN xid xid8;
ALTER TABLE ledger.instructions ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX instructions_feed ON ledger.instructions (xid) WHERE xid IS NOT NULL;
CREATE INDEX instructions_feed_history ON ledger.instructions (holder, seq) WHERE xid IS NULL;

-- Each webhook's place in the feed (engined --webhook): the cursor after
-- which its next batch starts, moved once the receiver took a batch.
CREATE TABLE ledger.webhooks (
	url        text PRIMARY KEY,
	cursor     text NOT NULL DEFAULT '',
	delivered  bigint NOT NULL DEFAULT 0,
	updated_at timestamptz NOT NULL DEFAULT now()
);
