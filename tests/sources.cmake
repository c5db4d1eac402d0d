# The two suites (LABELS unit / integration, and the integration groups no_sql and tsan), their
# shared support and the install check.
find_package(GTest REQUIRED)
include(GoogleTest)

# The test executables' own sources (gtest assertions, gmock expectations: template-heavy code
# that runs once per test) are compiled without optimisation: about half the compile time of the
# build type's -O2 (-O1 in the sanitizer builds), and the same tests. The code under test, the
# support library the benchmarks share (fake IM server, fixtures) and the benchmarks keep the
# build type's flags.
option(ROOM_OUTBOX_OPTIMIZE_TEST_CODE
  "compile the test executables' own sources with the build type's optimisation" OFF)
function(room_outbox_test_code target)
  if(NOT ROOM_OUTBOX_OPTIMIZE_TEST_CODE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()

# Test support: the fake Tencent IM server (room_outbox_fake_im, tests/support/im_stub.cmake), the
# MariaDB test fixture, real-process helpers, and
# tests/mocks (one double per seam). Links all three libraries: tests reach every seam.
add_library(room_outbox_test_support STATIC
  tests/support/child_process.cc
  tests/support/delivery_checks.cc
  tests/support/exported_metrics.cc
  tests/support/loopback_http.cc
  tests/support/failover_server.cc
  tests/support/fake_mysql_server.cc
  tests/support/grants.cc
  tests/support/mysql_admin.cc
  tests/support/private_mariadb.cc
  tests/support/relay_command.cc
  tests/support/relay_process.cc
  tests/support/shipped_text.cc
  tests/support/tcp_proxy.cc
  tests/support/test_database.cc
  tests/support/test_rows.cc
  tests/support/wait.cc
  tests/support/wake_sink.cc
  tests/mocks/background_fixture.cc
  tests/mocks/hook_fixture.cc
  tests/mocks/worker_fixture.cc)
target_include_directories(room_outbox_test_support
  PUBLIC ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/tests/mocks
         ${PROJECT_SOURCE_DIR}/hook/src)
target_link_libraries(room_outbox_test_support
  PUBLIC room_outbox_hook room_outbox_relay room_outbox_fake_im PkgConfig::HTTPLIB GTest::gmock
  PRIVATE room_outbox_build_settings)
target_compile_definitions(room_outbox_test_support PUBLIC
  ROOM_OUTBOX_SCHEMA_DIR="${PROJECT_SOURCE_DIR}/schema"
  ROOM_OUTBOX_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  ROOM_OUTBOX_BINARY_DIR="${PROJECT_BINARY_DIR}")

# No network, no database, no sleeping.
add_executable(unit_tests
  tests/unit/background_publisher_test.cc
  tests/unit/caller_statement_check_test.cc
  tests/unit/claim_plan_test.cc
  tests/unit/commit_checks_test.cc
  tests/unit/commit_vectors_test.cc
  tests/unit/config_hook_test.cc
  tests/unit/config_mysql_test.cc
  tests/unit/config_tencent_im_test.cc
  tests/unit/config_test.cc
  tests/unit/config_wake_test.cc
  tests/unit/curl_error_test.cc
  tests/unit/dialect_test.cc
  tests/unit/doc_pointers_test.cc
  tests/unit/docs_layout_test.cc
  tests/unit/duration_test.cc
  tests/unit/envelope_codec_test.cc
  tests/unit/fake_im_message_test.cc
  tests/unit/hook_sync_breaker_test.cc
  tests/unit/hook_metrics_test.cc
  tests/unit/hook_late_marks_test.cc
  tests/unit/hook_room_backoff_test.cc
  tests/unit/hook_test.cc
  tests/unit/hook_unleased_test.cc
  tests/unit/late_marks_test.cc
  tests/unit/sync_packs_test.cc
  tests/unit/im_breaker_test.cc
  tests/unit/im_credentials_test.cc
  tests/unit/im_request_test.cc
  tests/unit/packed_message_test.cc
  tests/unit/im_response_test.cc
  tests/unit/json_writer_test.cc
  tests/unit/sorted_json_test.cc
  tests/unit/envelope_events_test.cc
  tests/unit/lifecycle_log_test.cc
  tests/unit/log_line_test.cc
  tests/unit/metrics_test.cc
  tests/unit/mysql_error_test.cc
  tests/unit/node_identity_test.cc
  tests/unit/option_setter_test.cc
  tests/unit/secret_file_test.cc
  tests/unit/ops_unit_test.cc
  tests/unit/claim_step_test.cc
  tests/unit/loop_waits_test.cc
  tests/unit/outbox_worker_ahead_test.cc
  tests/unit/outbox_worker_test.cc
  tests/unit/read_only_watch_test.cc
  tests/unit/outbox_worker_wake_test.cc
  tests/unit/room_sender_test.cc
  tests/unit/room_sender_stream_test.cc
  tests/unit/unwritten_results_test.cc
  tests/unit/room_sender_pack_test.cc
  tests/unit/round_marks_test.cc
  tests/unit/worker_stats_test.cc
  tests/unit/expiry_policy_test.cc
  tests/unit/expiry_worker_test.cc
  tests/unit/park_policy_test.cc
  tests/unit/parking_test.cc
  tests/unit/process_rate_budget_test.cc
  tests/unit/process_registry_test.cc
  tests/unit/promql_metrics_test.cc
  tests/unit/publish_admission_test.cc
  tests/unit/publish_completion_test.cc
  tests/unit/rate_budget_test.cc
  tests/unit/share_split_test.cc
  tests/unit/result_writer_test.cc
  tests/unit/attempt_history_test.cc
  tests/unit/retry_policy_test.cc
  tests/unit/room_cell_test.cc
  tests/unit/room_backoff_test.cc
  tests/unit/secret_owner_test.cc
  tests/unit/room_pacing_test.cc
  tests/unit/room_queues_test.cc
  tests/unit/statement_list_test.cc
  tests/unit/statement_text_test.cc
  tests/unit/sync_breaker_test.cc
  tests/unit/usersig_test.cc
  tests/unit/wake_gap_test.cc
  tests/unit/wake_signal_test.cc
  tests/unit/wake_socket_test.cc
  # Replaces operator new and delete of this executable only (freed_secret_watch.h).
  tests/support/freed_secret_watch.cc)
target_link_libraries(unit_tests PRIVATE room_outbox_test_support room_outbox_sim
  GTest::gmock_main room_outbox_build_settings)
# The docs' claims against the code (tests/unit/doc_claims_test.cc): the command line is CLI11's
# app, the SONAME and the library's version are the build's.
target_sources(unit_tests PRIVATE tests/unit/doc_claims_test.cc tests/support/doc_claims.cc)
target_link_libraries(unit_tests PRIVATE CLI11::CLI11)
target_compile_definitions(unit_tests PRIVATE
  ROOM_OUTBOX_TEST_SOVERSION="${ROOM_OUTBOX_SOVERSION}"
  ROOM_OUTBOX_TEST_LIBRARY_VERSION="${ROOM_OUTBOX_SOVERSION}.${PROJECT_VERSION_MINOR}.${PROJECT_VERSION_PATCH}")
gtest_discover_tests(unit_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
room_outbox_test_code(unit_tests)

# A private MariaDB (scripts/run-tests.sh) and loopback HTTP servers; real processes. The
# integration tests are three executables, one per group of source files; each group's tests carry
# the group's ctest LABELS, which select the passes of the Makefile (a file's group is its label
# set, never a pattern over test names, so a renamed suite stays where its file is):
#   integration  every integration test (with the C, Go, ABI and install checks below)
#   no_sql       the tests that send no SQL of their own: the MySQL-set pass of `make test`
#                leaves them out (-LE)
#   tsan         the tests whose threads matter under ThreadSanitizer: `make test-tsan` runs them
# A new integration test file goes into the list of its group; LabelGroups.* (below) fails when a
# label a pass selects has no test.
set(ROOM_OUTBOX_INTEGRATION_SOURCES
  tests/integration/app_budget_test.cc
  tests/integration/hook_app_budget_test.cc
  tests/integration/chaos_test.cc
  tests/integration/claim_cost_test.cc
  tests/integration/clock_skew_test.cc
  tests/integration/commit_affected_rows_test.cc
  tests/integration/commit_command_test.cc
  tests/integration/commit_misuse_test.cc
  tests/integration/commit_multirow_test.cc
  tests/integration/commit_outcome_test.cc
  tests/integration/create_hook_test.cc
  tests/integration/cut_commit_test.cc
  tests/integration/dialect_sets_test.cc
  tests/integration/hook_pack_test.cc
  tests/integration/hook_sync_test.cc
  tests/integration/least_privilege_test.cc
  tests/integration/migrate_test.cc
  tests/integration/mysql_tls_test.cc
  tests/integration/ops_commands_test.cc
  tests/integration/ops_daemon_test.cc
  tests/integration/ops_health_endpoints_test.cc
  tests/integration/ops_units_test.cc
  tests/integration/expiry_daemon_test.cc
  tests/integration/attempt_history_test.cc
  tests/integration/relay_pack_test.cc
  tests/integration/parking_daemon_test.cc
  tests/integration/read_only_failover_test.cc
  tests/integration/relay_claim_test.cc
  tests/integration/relay_outage_test.cc
  tests/integration/relay_overlap_test.cc
  tests/integration/relay_scale_test.cc
  tests/integration/relay_scopes_test.cc
  tests/integration/relay_store_test.cc
  tests/integration/room_schedule_test.cc
  tests/integration/room_sim_test.cc
  tests/integration/schema_test.cc
  tests/integration/schema_wait_test.cc
  tests/integration/sql_contract_test.cc
  tests/integration/systemd_units_test.cc
  tests/integration/tencent_im_scopes_test.cc
  tests/integration/wake_paths_test.cc)
# Threads under TSan, against the database: signal handling and relay processes, the relay's
# wake-ups, the hook's sync publish and its background publisher thread.
set(ROOM_OUTBOX_INTEGRATION_TSAN_SOURCES
  tests/integration/hook_delivery_test.cc
  tests/integration/hook_mark_after_outage_test.cc
  tests/integration/hook_metrics_test.cc
  tests/integration/hook_room_refusal_test.cc
  tests/integration/hook_sync_mode_test.cc
  tests/integration/relay_process_test.cc
  tests/integration/node_lock_test.cc
  tests/integration/lease_takeover_test.cc
  tests/integration/relay_wake_test.cc)
# Threads under TSan, no SQL of their own: the publisher (curl multi and the fake IM server's
# threads), the metrics server, the wake listener, the worker's waits on the real clock.
set(ROOM_OUTBOX_INTEGRATION_NO_SQL_TSAN_SOURCES
  tests/integration/fake_im_packed_test.cc
  tests/integration/loop_clock_test.cc
  tests/integration/metrics_server_test.cc
  tests/integration/tencent_im_publisher_test.cc
  tests/integration/wake_listener_test.cc)

# The process-wide library setup every integration executable runs (a gtest Environment that
# registers itself): compiled once, linked into each as an object file.
add_library(room_outbox_integration_environment OBJECT tests/integration/global_environment.cc)
target_link_libraries(room_outbox_integration_environment PRIVATE room_outbox_test_support
  room_outbox_build_settings)

# room_outbox_integration_executable(<target> <labels> <sources>...)
set(ROOM_OUTBOX_INTEGRATION_TEST_EXECUTABLES)
function(room_outbox_integration_executable target labels)
  add_executable(${target} ${ARGN})
  room_outbox_test_code(${target})
  target_link_libraries(${target} PRIVATE room_outbox_integration_environment
    room_outbox_test_support GTest::gmock_main room_outbox_build_settings)
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
  # The labels are set by a ctest script of their own, included after the discovered tests: it
  # names the tests of this executable by the list discovery wrote (<target>_TESTS).
  # gtest_discover_tests' PROPERTIES cannot carry a value with more than one element, since the
  # list is flattened on its way to the discovery step.
  set(script ${PROJECT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${script}
    "if(${target}_TESTS)\n"
    "  set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
  # The process tests run the binaries of this build tree.
  add_dependencies(${target} outbox-relay room-sim)
  set(ROOM_OUTBOX_INTEGRATION_TEST_EXECUTABLES ${ROOM_OUTBOX_INTEGRATION_TEST_EXECUTABLES}
    ${target} PARENT_SCOPE)
endfunction()
# freed_secret_watch.cc replaces operator new and delete of this executable only
# (tests/support/freed_secret_watch.h).
room_outbox_integration_executable(integration_tests_sql "integration"
  ${ROOM_OUTBOX_INTEGRATION_SOURCES} tests/support/freed_secret_watch.cc)
room_outbox_integration_executable(integration_tests_tsan "integration;tsan"
  ${ROOM_OUTBOX_INTEGRATION_TSAN_SOURCES})
room_outbox_integration_executable(integration_tests_no_sql "integration;no_sql;tsan"
  ${ROOM_OUTBOX_INTEGRATION_NO_SQL_TSAN_SOURCES})
# `integration_tests` builds them all (SANITIZE_TARGETS in the Makefile names it; TSAN_TARGETS
# names the two that hold the tsan-labelled tests).
add_custom_target(integration_tests)
add_dependencies(integration_tests ${ROOM_OUTBOX_INTEGRATION_TEST_EXECUTABLES})

# Each selection a pass of the Makefile makes lists at least one test, and every test carries a
# label: `make test`'s MySQL-set pass (integration without no_sql), `make test-tsan` (unit, tsan),
# `make unit-test`, `make integration-test`.
add_test(NAME LabelGroups.EveryPassSelectsTests
  COMMAND ${PROJECT_SOURCE_DIR}/tests/support/check-label-groups.sh ${CMAKE_CTEST_COMMAND}
          ${PROJECT_BINARY_DIR} unit integration no_sql tsan "integration!no_sql")
set_tests_properties(LabelGroups.EveryPassSelectsTests PROPERTIES LABELS unit)

# The alert rules' cases (promtool test rules): each alert of conf/alerts.yml fires when its case
# says and stays quiet otherwise; the alerts on IM fire within 2 minutes of an outage starting.
add_test(NAME Alerts.PromtoolTestRules
  COMMAND promtool test rules ${PROJECT_SOURCE_DIR}/tests/alerts/alerts_test.yml)
set_tests_properties(Alerts.PromtoolTestRules PROPERTIES LABELS unit)


# The installed hook as a room-service sees it: make install + pkg-config + a consumer build.
add_test(NAME InstallTest.HookBuildsFromItsPkgConfigFile
  COMMAND ${PROJECT_SOURCE_DIR}/tests/install/check-install.sh ${PROJECT_BINARY_DIR})
# No SQL of its own (label no_sql): it builds and runs consumers without a database.
set_tests_properties(InstallTest.HookBuildsFromItsPkgConfigFile PROPERTIES
  LABELS "integration;no_sql")
# The deployment examples (compose.yaml, deploy/kubernetes/) against the product's ports, paths,
# config keys and files: `docker-compose config` and `outbox-relay --check-config` of their
# configs; no database, no container runtime.
add_test(NAME DeployExamples.MatchTheProduct
  COMMAND ${PROJECT_SOURCE_DIR}/tests/install/check-deploy-examples.sh ${PROJECT_BINARY_DIR})
set_tests_properties(DeployExamples.MatchTheProduct PROPERTIES LABELS "integration;no_sql")
include(tests/c_abi/tests.cmake)
include(hook/gosql/tests.cmake)

# The grammar check (tests/sqlcheck): sql-statements prints every statement of the MySQL set, the
# schema files and room-sim's; check.js parses them with MySQL Workbench's MySQL 8.0 grammar
# (the npm packages `make deps` installs into tests/sqlcheck/node_modules). The second test
# proves the check can fail: it must refuse each MariaDB-only statement it is given.
add_executable(sql-statements tests/sqlcheck/sql_statements_main.cc)
target_include_directories(sql-statements PRIVATE ${PROJECT_SOURCE_DIR}/sim ${PROJECT_SOURCE_DIR}/tests)
target_compile_definitions(sql-statements PRIVATE ROOM_OUTBOX_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(sql-statements PRIVATE room_outbox_relay nlohmann_json::nlohmann_json
  room_outbox_build_settings)
add_test(NAME SqlCheck.MySqlSetParsesWithTheMySql80Grammar
  COMMAND ${PROJECT_SOURCE_DIR}/tests/sqlcheck/run-sqlcheck.sh $<TARGET_FILE:sql-statements>)
add_test(NAME SqlCheck.RefusesMariaDbOnlyStatements
  COMMAND ${PROJECT_SOURCE_DIR}/tests/sqlcheck/run-sqlcheck.sh $<TARGET_FILE:sql-statements>
          --expect-failure)
set_tests_properties(SqlCheck.MySqlSetParsesWithTheMySql80Grammar SqlCheck.RefusesMariaDbOnlyStatements
  PROPERTIES LABELS sqlcheck)
add_dependencies(integration_tests sql-statements)
