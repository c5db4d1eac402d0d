-- Parking and retention.
--   status 'parked'  set aside by an operator (`outbox-relay park`) or by the opt-in park policy
--                    ([outbox_worker] park_permanent_after); never claimed, never sent, never
--                    purged; `outbox-relay requeue` makes it pending again. The value is appended
--                    to the ENUM, which MariaDB and MySQL apply as a metadata-only change.
--   parked_at_ms     when the row was parked (database server clock); NULL otherwise.
--   idx_status_published  serves `outbox-relay purge`: published rows by published_at_ms, so a
--                    purge batch reads only the rows it deletes. It also serves the parked count.
-- Plain ALTERs, valid on MariaDB and MySQL: apply the file once (`outbox-relay migrate` reads an
-- ALTER that finds its column or index there already as applied).
ALTER TABLE room_outbox
  MODIFY COLUMN status ENUM('pending', 'published', 'parked') NOT NULL DEFAULT 'pending';
ALTER TABLE room_outbox ADD COLUMN parked_at_ms BIGINT NULL AFTER published_at_ms;
ALTER TABLE room_outbox ADD INDEX idx_status_published (status, published_at_ms, id);
-- The command-log purge deletes by created_at_ms.
ALTER TABLE room_command_log ADD INDEX idx_created_at (created_at_ms, id);
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (3, '003_parked', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
