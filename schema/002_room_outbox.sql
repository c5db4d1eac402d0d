-- The outbox: one row per room event to deliver to Tencent IM.
--   status           'pending' until delivered (or a no-op type), then 'published'; rows are
--                    never deleted by the hook or the relay.
--   retry_count      failed delivery attempts so far (the hook's sync attempt does not count).
--   last_error       the latest failure, short and secret-free (bounded to 512 characters).
--   next_attempt_at_ms  when the row is due: a claim sets it to the lease end, a failure to the
--                    next retry time. The relay claims status='pending' AND next_attempt_at_ms
--                    <= now through idx_pending_due, so a scan costs what is pending, not what
--                    the table holds.
--   claim_token      the claim (relay or hook sync attempt) that holds the row; results are
--                    written only by the holder.
CREATE TABLE IF NOT EXISTS room_outbox (
  id                 BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  event_id           VARCHAR(128)    NOT NULL,
  event_type         VARCHAR(64)     NOT NULL,
  room_id            VARCHAR(128)    NOT NULL,
  command_id         VARCHAR(128)    NOT NULL,
  request_id         VARCHAR(128)    NOT NULL DEFAULT '',
  envelope           MEDIUMTEXT      NOT NULL,
  status             ENUM('pending', 'published') NOT NULL DEFAULT 'pending',
  retry_count        INT UNSIGNED    NOT NULL DEFAULT 0,
  last_error         VARCHAR(512)    NULL,
  next_attempt_at_ms BIGINT          NOT NULL DEFAULT 0,
  claim_token        VARCHAR(64)     NULL,
  created_at_ms      BIGINT          NOT NULL,
  updated_at_ms      BIGINT          NOT NULL,
  published_at_ms    BIGINT          NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_event_id (event_id),
  KEY idx_pending_due (status, next_attempt_at_ms, id),
  KEY idx_room_status (room_id, status, id),
  KEY idx_command_id (command_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (2, '002_room_outbox', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
