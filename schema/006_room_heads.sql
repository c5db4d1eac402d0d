-- Room-fair claims.
--   idx_room_status  keeps its name and its columns, status first: (status, room_id, id). The
--                    claim finds every room with pending rows and its head (lowest pending id) by
--                    a loose scan of it, one index dive per room with pending rows: its cost
--                    follows the rooms served, not a room's backlog nor the rooms whose rows are
--                    all published. Every other use (a room's pending rows by id, the stats'
--                    head checks) names status and room_id by equality, as before.
-- One ALTER, online (in place, no lock) on MariaDB and MySQL: the index is rebuilt under the same
-- name, so a relay of the previous release (FORCE INDEX (idx_room_status)) keeps working while it
-- runs. Running it again rebuilds the index again and changes nothing.
ALTER TABLE room_outbox DROP INDEX idx_room_status, ADD INDEX idx_room_status (status, room_id, id),
  ALGORITHM = INPLACE, LOCK = NONE;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (6, '006_room_heads', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
