-- Each row's attempt history (docs/operations.md, "Why was this event late").
--   attempt_count  how many entries the relay ever wrote for the row: one per delivery attempt
--                  (published or failed), and one for a row settled without a send (skipped,
--                  expired). Never reset, never bounded.
--   attempts       the last 16 of those entries, oldest first, one per line ('\n'), each
--                  "<at_ms>\t<node_id>\t<pack_events>\t<outcome>\t<detail>\t<latency_ms>":
--                  at_ms the database server's time the attempt's answer came (its mark's now
--                  minus the time the result waited to be written), node_id the relay's,
--                  pack_events the events of the message it went in (0: no send), outcome
--                  published, retryable, rate_limited, unknown, permanent, not_attempted,
--                  undecodable, skipped or expired, detail the IM ErrorCode ("im 60007"), the
--                  HTTP status ("http 503") or "-", latency_ms the request's. Written by the
--                  relay's marks in the statement that marks the row; purge deletes it with
--                  the row.
-- An instant ALTER on MariaDB 10.3+ and MySQL 8.0 (metadata only, no table copy); a relay or hook
-- of the previous release never reads the columns and keeps working while it runs.
ALTER TABLE room_outbox ADD COLUMN attempt_count INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN attempts TEXT NULL;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (11, '011_attempts', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
