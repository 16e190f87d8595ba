-- The rows every batch updates (a holder's head, its own accounts) leave room
-- on their pages, so that an update stays on its row's page (a HOT update):
-- no new index entry, a smaller WAL record. New pages keep the room; those
-- written before fill as they are rewritten.
ALTER TABLE ledger.holders SET (fillfactor = 70);
ALTER TABLE ledger.accounts SET (fillfactor = 70);
