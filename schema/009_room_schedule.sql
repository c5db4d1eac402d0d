-- The room schedule: the rooms with pending rows and when each next needs a claim, so a claim reads
-- the rooms it serves and never every backlogged room.
--   room_outbox_room   one row per room that has (or had, until a claim visits it) pending rows.
--     due_at_ms        when a claim should next look at the room (database server clock): now
--                      when rows arrived or came back; the lease end while a claim's run is in
--                      flight (its marks bring it back to now); a failed head's retry time; a paced
--                      room's next interval slot. A claim takes due rooms by idx_room_due with
--                      FOR UPDATE SKIP LOCKED, reads each one's first rows from its head and writes
--                      the room's next due time; a room without pending rows is deleted then.
--     updated_at_ms    when the listing, a claim or a mark last wrote the room (server clock).
--                      Outside idx_room_due: a claim that takes rooms through that index reads
--                      each row itself, so FOR UPDATE locks the row, not the index entry alone.
--   room_listed        on room_outbox: 0 until the relay has put the row's room on the schedule
--                      (every writer leaves the default; the relay's own give-backs and
--                      `outbox-relay requeue` set it to 0 again). The relay lists a batch of such
--                      rows at the start of each claim through idx_unlisted (room_listed, status,
--                      id): the range (0, 'pending') holds the rows that arrived since, so the cost
--                      follows the rows arriving, never the backlog or the published history.
-- Online on MariaDB 10.6+ and MySQL 8.0: a new table, an instant ADD COLUMN, an in-place index
-- build without a lock. A relay of the previous release never reads the new column or table and
-- keeps working while this runs; every existing row starts unlisted, so the first claims of the
-- new relay list the pending backlog (a batch per claim) and the published history never (it is
-- outside the range).
CREATE TABLE IF NOT EXISTS room_outbox_room (
  room_id       VARCHAR(128) NOT NULL,
  due_at_ms     BIGINT       NOT NULL,
  updated_at_ms BIGINT       NOT NULL,
  PRIMARY KEY (room_id),
  KEY idx_room_due (due_at_ms, room_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
ALTER TABLE room_outbox ADD COLUMN room_listed TINYINT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE room_outbox ADD INDEX idx_unlisted (room_listed, status, id),
  ALGORITHM = INPLACE, LOCK = NONE;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (9, '009_room_schedule', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
