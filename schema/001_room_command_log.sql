-- The command log: one row per applied room command. command_id is the idempotency key.
CREATE TABLE IF NOT EXISTS room_command_log (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  command_id    VARCHAR(128)    NOT NULL,
  room_id       VARCHAR(128)    NOT NULL,
  command_type  VARCHAR(64)     NOT NULL,
  request_id    VARCHAR(128)    NOT NULL DEFAULT '',
  room_seq      BIGINT          NOT NULL DEFAULT 0,
  payload       MEDIUMTEXT      NOT NULL,
  created_at_ms BIGINT          NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_command_id (command_id),
  KEY idx_room_seq (room_id, room_seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (1, '001_room_command_log', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
