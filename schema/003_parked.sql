-- Parking and retention (issue 9).
--   status 'parked'  set aside by an operator (`outbox-relay park`) or by the opt-in park policy
--                    ([outbox_worker] park_permanent_after); never claimed, never sent, never
--                    purged; `outbox-relay requeue` makes it pending again. The value is appended
--                    to the ENUM, which MariaDB applies as a metadata-only change.
--   parked_at_ms     when the row was parked (database server clock); NULL otherwise.
--   idx_status_published  serves `outbox-relay purge`: published rows by published_at_ms, so a
--                    purge batch reads only the rows it deletes. It also serves the parked count.
-- Idempotent: every statement may run again on a database that already has it.
ALTER TABLE room_outbox
  MODIFY COLUMN status ENUM('pending', 'published', 'parked') NOT NULL DEFAULT 'pending';
ALTER TABLE room_outbox ADD COLUMN IF NOT EXISTS parked_at_ms BIGINT NULL AFTER published_at_ms;
ALTER TABLE room_outbox ADD INDEX IF NOT EXISTS idx_status_published (status, published_at_ms, id);
-- The command-log purge deletes by created_at_ms.
ALTER TABLE room_command_log ADD INDEX IF NOT EXISTS idx_created_at (created_at_ms, id);
