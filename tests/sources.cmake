# Shared test support, mocks and the hook's own tests.
target_sources(room_outbox_test_support PRIVATE tests/support/relay_command.cc)
target_sources(room_outbox_test_support PRIVATE tests/support/mysql_admin.cc
  tests/support/tcp_proxy.cc tests/support/test_database.cc)
target_include_directories(room_outbox_test_support PUBLIC tests/mocks)
target_compile_definitions(room_outbox_test_support PUBLIC
  ROOM_OUTBOX_SCHEMA_DIR="${PROJECT_SOURCE_DIR}/schema"
  ROOM_OUTBOX_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  ROOM_OUTBOX_BINARY_DIR="${PROJECT_BINARY_DIR}")
target_sources(unit_tests PRIVATE tests/unit/envelope_codec_test.cc tests/unit/hook_test.cc
  tests/unit/commit_checks_test.cc
  tests/unit/claim_plan_test.cc)
target_sources(integration_tests PRIVATE tests/integration/schema_test.cc
  tests/integration/hook_delivery_test.cc
  tests/integration/commit_outcome_test.cc
  tests/integration/clock_skew_test.cc
  tests/integration/global_environment.cc
  tests/integration/room_sim_test.cc)
include(tests/integration/scale.cmake)

# The installed hook as a room-service sees it: make install + pkg-config + a consumer build.
add_test(NAME InstallTest.HookBuildsFromItsPkgConfigFile
  COMMAND ${PROJECT_SOURCE_DIR}/tests/install/check-install.sh ${PROJECT_BINARY_DIR})
set_tests_properties(InstallTest.HookBuildsFromItsPkgConfigFile PROPERTIES LABELS integration)

# Operations (issue 9): operator commands, health, journald, reload and watchdog.
target_sources(integration_tests PRIVATE
  tests/integration/ops_commands_test.cc
  tests/integration/ops_daemon_test.cc
  tests/integration/ops_units_test.cc)
target_sources(unit_tests PRIVATE tests/unit/ops_unit_test.cc)
target_sources(integration_tests PRIVATE tests/integration/ops_health_endpoints_test.cc)

# Failure scopes (issue 8): the relay's scopes and breaker, the hook's sync breaker and checks.
target_sources(unit_tests PRIVATE tests/unit/sync_breaker_test.cc tests/unit/hook_sync_breaker_test.cc)
target_sources(integration_tests PRIVATE
  tests/integration/relay_scopes_test.cc
  tests/integration/hook_sync_test.cc)

# sync_publish = inline | background | off and the hook's wake-up of the relay (issue 10).
target_sources(unit_tests PRIVATE tests/unit/config_hook_test.cc tests/unit/background_publisher_test.cc)
target_sources(integration_tests PRIVATE tests/integration/hook_sync_mode_test.cc)
