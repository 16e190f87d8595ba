-- An instruction is found by its id through (holder, id) whenever its row
-- stores the id whole: an ordinary instruction, and a transfer part whose
-- id, counterparty and memo are not the ones ledger.events derives (one the
-- engine does not write, but a client calling the library's apply function
-- itself can). Migration 7 left every part out of the index, and a lookup
-- by id found such a part nowhere. The parts it derives (counterparty '')
-- are still found through their transfer.
DROP INDEX ledger.instructions_id;
CREATE INDEX instructions_id ON ledger.instructions (holder, id) WHERE counterparty <> '' OR transfer IS NULL;
