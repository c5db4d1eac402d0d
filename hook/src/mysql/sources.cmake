# MariaDB layer: handles, error mapping, connection, prepared statements, MariaDbOutboxStore.
target_sources(room_outbox_hook PRIVATE
  hook/src/mysql/mysql_error.cc
  hook/src/mysql/statement.cc
  hook/src/mysql/connection.cc
  hook/src/mysql/id_lists.cc
  hook/src/mysql/mariadb_outbox_store.cc
  hook/src/mysql/mariadb_commit.cc
  hook/src/mysql/outbox_insert.cc
  hook/src/mysql/mariadb_claim.cc
  hook/src/mysql/mariadb_marks.cc)
if(ROOM_OUTBOX_BUILD_TESTS)
  target_sources(unit_tests PRIVATE tests/unit/mysql_error_test.cc)
  target_sources(integration_tests PRIVATE
    tests/integration/mariadb_outbox_store_test.cc
    tests/integration/commit_command_test.cc
    tests/integration/commit_multirow_test.cc
    tests/integration/claim_cost_test.cc)
endif()
