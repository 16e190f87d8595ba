-- Each webhook's own number, the second key of the advisory lock its sender
-- holds (ledger.LeaseWebhook): a hash of the URL, the key before, is the same
-- for two URLs once in 2^32 pairs, and one of the two webhooks then never
-- delivered.
ALTER TABLE ledger.webhooks ADD COLUMN lock_id int GENERATED ALWAYS AS IDENTITY;
