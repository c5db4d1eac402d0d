-- room-sim's own table: the snapshot a room-service persists in the same transaction as its
-- command log and outbox rows (through the hook's caller statements). Not part of the outbox
-- schema; apply it where room-sim runs.
CREATE TABLE IF NOT EXISTS room_snapshot (
  room_id       VARCHAR(128) NOT NULL,
  room_seq      BIGINT       NOT NULL,
  state         MEDIUMTEXT   NOT NULL,
  updated_at_ms BIGINT       NOT NULL,
  PRIMARY KEY (room_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
