-- Hot holders (DESIGN.md, Hot holders): lane i (1 to 63) of a hot holder X
-- is the holder X#i, a holder in every other respect (its own seq, digest
-- chain and events); lane 0 is X itself. parent names the hot holder a
-- lane belongs to, NULL for every other holder (lane 0, a plain holder).
-- Derived from the name, so that the sink writes nothing more and the rows
-- already there get theirs: '#' is outside the id alphabet, so only a lane's
-- name has one '#', followed by a lane number without a leading zero.
--
-- The index holds the lanes alone: a statement or a lookup under X finds
-- X's lanes through it, and a plain holder's finds nothing at once.
ALTER TABLE ledger.holders ADD COLUMN parent text
	GENERATED ALWAYS AS (substring(holder FROM '^([^#]+)#(?:[1-9]|[1-5][0-9]|6[0-3])$')) STORED;
CREATE INDEX holders_parent ON ledger.holders (parent) WHERE parent IS NOT NULL;

-- lanes is a hot holder's lane count as its events set it (open with lanes,
-- set_lanes), 1 for a plain holder: a rebuild writes it back to Redis, and
-- reconcile compares it.
ALTER TABLE ledger.holders ADD COLUMN lanes int NOT NULL DEFAULT 1;
