-- The privileges of room-outbox's three database users, the same on MariaDB 10.6+ and MySQL 8:
-- each the least its statements (core/mysql/outbox_sql.h, schema/*.sql) need. docs/databases.md
-- ("Database users and their grants") says why each is needed and quotes these statements with
-- {database} = room_outbox, {operator} = 'outbox_operator'@'%', {hook} = 'outbox_hook'@'%' and
-- {relay} = 'outbox_relay'@'%'; tests/integration/least_privilege_test.cc runs each side with
-- exactly these grants (and checks that docs/databases.md quotes every one).
--
-- Create the accounts first (CREATE USER). Run the operator's grants, then `outbox-relay migrate`
-- as the operator, then the hook's and the relay's: a grant on a table or column that does not
-- exist yet is refused unless it includes CREATE.

-- The operator: `outbox-relay migrate` (CREATE TABLE, ALTER TABLE, its version rows) and the
-- operator commands (stats, show, park, requeue, purge).
GRANT SELECT, INSERT, UPDATE, CREATE ON {database}.room_outbox_schema_version TO {operator};
GRANT SELECT, INSERT, DELETE, CREATE, ALTER ON {database}.room_command_log TO {operator};
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER ON {database}.room_outbox TO {operator};
GRANT CREATE ON {database}.room_outbox_im_member TO {operator};
GRANT SELECT, DELETE, CREATE ON {database}.room_outbox_room TO {operator};
GRANT CREATE ON {database}.room_outbox_relay_run TO {operator};

-- The hook (the room service's user): the commit, the duplicate and lost-commit lookups, the sync
-- publish's marks and the app's IM budget membership. Add the room service's own tables.
GRANT SELECT, INSERT ON {database}.room_command_log TO {hook};
GRANT SELECT, INSERT, UPDATE (status, last_error, next_attempt_at_ms, claim_token, updated_at_ms, published_at_ms, pack_size) ON {database}.room_outbox TO {hook};
GRANT SELECT, INSERT, UPDATE, DELETE ON {database}.room_outbox_im_member TO {hook};

-- The relay: the schema check, the claim and its room schedule, leases, marks, parking and expiry,
-- the gauges, the app's IM budget membership, and its run's row (the leases of relays gone given
-- back).
GRANT SELECT ON {database}.room_outbox_schema_version TO {relay};
GRANT SELECT, UPDATE (status, retry_count, drop_count, last_error, next_attempt_at_ms, claim_token, updated_at_ms, published_at_ms, parked_at_ms, pack_size, room_listed, attempt_count, attempts) ON {database}.room_outbox TO {relay};
GRANT SELECT, INSERT, UPDATE ON {database}.room_outbox_room TO {relay};
GRANT SELECT, INSERT, UPDATE, DELETE ON {database}.room_outbox_im_member TO {relay};
GRANT SELECT, INSERT, UPDATE, DELETE ON {database}.room_outbox_relay_run TO {relay};
