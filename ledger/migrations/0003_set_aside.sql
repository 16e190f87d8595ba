-- Events set aside: an event the sink cannot apply (PostgreSQL refuses one of
-- its fields, a malformed field, a digest that does not chain) is recorded
-- here, then removed from its outbox; its holder's later events wait in
-- ledger.parked behind it, while every other holder's events flow on.
-- fields holds the stream entry's fields as read, as a JSON object in bytea:
-- PostgreSQL's text and jsonb refuse U+0000, which such an event may hold
-- (read it with convert_from(fields, 'UTF8')). Exact, but for bytes that are
-- not UTF-8, which JSON shows as U+FFFD. stream and entry say where
-- it was read ('' for an event set aside from ledger.parked). An operator who
-- repaired it sets resolved_at and resolution (docs/ledger.md).
CREATE TABLE ledger.set_aside (
	id           bigserial PRIMARY KEY,
	holder       text NOT NULL,
	seq          bigint NOT NULL,
	stream       text NOT NULL,
	entry        text NOT NULL,
	fields       bytea NOT NULL,
	reason       text NOT NULL,
	set_aside_at timestamptz NOT NULL DEFAULT now(),
	resolved_at  timestamptz,
	resolution   text
);
CREATE INDEX set_aside_open ON ledger.set_aside (holder, seq) WHERE resolved_at IS NULL;
