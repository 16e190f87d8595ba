-- The digest version each instruction's event was verified by
-- (docs/events.md, Digest): 1, the newline-joined form of the events written
-- before version 2, or 2, length-prefixed terms. A holder's history may hold
-- both, version 1 first; each row's digest checks again by its own version.
ALTER TABLE ledger.instructions ADD COLUMN dv smallint NOT NULL DEFAULT 1 CHECK (dv IN (1, 2));
