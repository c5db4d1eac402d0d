-- Relays that can be found, so that any relay takes back the leases of one proven gone, whatever
-- node_id it ran under (docs/relay.md, "A relay that dies").
--   room_outbox_relay_run  one row per running relay daemon (a run: one process), written when it
--                  takes its node lock and beaten every 500 ms; deleted when it stops, or by the
--                  relay that gives back its leases once it is gone.
--     token_prefix   the start of every claim token of the run: "relay-<node>-<run>-".
--     lock_name      the named lock of its node_id (NodeLockName): free when no live relay runs
--                    under that node_id.
--     node_id        as configured, for operators.
--     started_at_ms, beat_ms  when it took its lock, its last beat (database server clock).
--   idx_claim_token  on room_outbox: the rows a run holds, found by its token prefix (a range of
--                    this index), so giving back a gone run's leases costs the rows given back,
--                    never a walk of the backlog.
-- The ALTER is online (in place, no lock) on MariaDB and MySQL; a relay or hook of the previous
-- release keeps working while it runs. Running the file again changes nothing.
CREATE TABLE IF NOT EXISTS room_outbox_relay_run (
  token_prefix  VARCHAR(64)  NOT NULL,
  lock_name     VARCHAR(64)  NOT NULL,
  node_id       VARCHAR(255) NOT NULL,
  started_at_ms BIGINT       NOT NULL,
  beat_ms       BIGINT       NOT NULL,
  PRIMARY KEY (token_prefix),
  KEY idx_lock_name (lock_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
ALTER TABLE room_outbox ADD INDEX idx_claim_token (claim_token), ALGORITHM = INPLACE, LOCK = NONE;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (10, '010_relay_runs', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
