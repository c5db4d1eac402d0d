-- Definite drops.
--   drop_count  how many times IM answered OK + MsgDropReason for the row (a definite
--               non-delivery, e.g. the group's 40 msg/s frequency control). The relay sends the
--               row with Random = RandomForRow(id, drop_count), so a resend after a drop gets a new
--               Random (IM cannot swallow it as a duplicate of the dropped message) while a resend
--               after an unknown outcome keeps it (IM can dedupe it). MarkFailed adds 1 for a
--               dropped attempt; nothing else changes it.
-- A plain ALTER, valid on MariaDB and MySQL: apply the file once (`outbox-relay migrate` reads it
-- as applied when the column is there already).
ALTER TABLE room_outbox ADD COLUMN drop_count INT UNSIGNED NOT NULL DEFAULT 0 AFTER retry_count;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (4, '004_drop_count', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
