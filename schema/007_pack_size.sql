-- Packed messages ([tencent_im] pack_max_events).
--   pack_size        0, or on the first row of a pack whose send failed without IM definitely
--                    dropping it (no answer in time, a 5xx, a dropped connection, ...): how many
--                    events that message carried. The next send of the row (relay or hook) is
--                    the same pack again, the same rows in the same body with the same Random,
--                    so IM can dedupe it if the first one was delivered after all. Set by the
--                    failure marks (and the hook's hand-back); a definite drop or any other
--                    mark of the row sets it back to 0.
-- An instant ALTER on MariaDB 10.3+ and MySQL 8.0 (metadata only, no table copy); a relay of the
-- previous release never reads the column and keeps working while it runs.
ALTER TABLE room_outbox ADD COLUMN pack_size SMALLINT UNSIGNED NOT NULL DEFAULT 0 AFTER drop_count;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (7, '007_pack_size', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
