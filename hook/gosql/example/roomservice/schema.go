package roomservice

import (
	"context"
	"database/sql"
)

// roomStateTable is the service's own state: one row per room, its version (room_seq) and the
// gifts it received. The outbox tables come from outbox-relay migrate.
const roomStateTable = `CREATE TABLE IF NOT EXISTS room_gift_state (
  room_id VARCHAR(128) NOT NULL PRIMARY KEY,
  room_seq BIGINT NOT NULL,
  gifts BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`

// CreateSchema creates the service's table when it is missing.
func CreateSchema(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, roomStateTable)
	return err
}
