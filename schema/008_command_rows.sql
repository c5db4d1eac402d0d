-- A command's rows from one index.
--   idx_command_id  keeps its name, now (command_id, id, event_id): a command's outbox rows, their
--                   ids and their event_ids in id order, read from the index alone. The MySQL
--                   statement set's commit reads its new rows back that way before COMMIT
--                   ("Using index": no primary-key lookup per row); the lookup of a lost commit's
--                   rows and the command-log purge's check use it as before (command_id by
--                   equality).
-- One ALTER, online (in place, no lock) on MariaDB and MySQL: the index is rebuilt under the same
-- name, so a hook or relay of the previous release keeps working while it runs, and a hook on a
-- database not yet migrated commits with the same statements, a primary-key lookup per new row
-- dearer. Running it again rebuilds the index again and changes nothing.
ALTER TABLE room_outbox DROP INDEX idx_command_id,
  ADD INDEX idx_command_id (command_id, id, event_id), ALGORITHM = INPLACE, LOCK = NONE;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (8, '008_command_rows', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
