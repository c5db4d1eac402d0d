-- The schema's version table: one row per schema file applied (its number, its name and when,
-- on the database server's clock). Every file records itself as its last statement, so a schema
-- applied with any tool is recognised; `outbox-relay migrate` (the way to apply these files; by
-- hand, each file once, in name order) reads it to know what to apply. A relay on a schema older
-- than it needs waits, not ready; its --once and operator commands refuse to run.
CREATE TABLE IF NOT EXISTS room_outbox_schema_version (
  version       INT UNSIGNED NOT NULL,
  name          VARCHAR(128) NOT NULL,
  applied_at_ms BIGINT       NOT NULL,
  PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (0, '000_schema_version', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
