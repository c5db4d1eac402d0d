# outbox-relay: the relay library (everything of relay/src but main.cc) and its tests.
target_sources(room_outbox_relay PRIVATE
  relay/src/build_info.cc
  relay/src/command_line.cc
  relay/src/config.cc
  relay/src/duration.cc
  relay/src/global_init.cc
  relay/src/log_line.cc
  relay/src/metrics.cc
  relay/src/claim_ahead.cc
  relay/src/outbox_worker.cc
  relay/src/result_writer.cc
  relay/src/retry_policy.cc
  relay/src/room_pace.cc
  relay/src/room_queues.cc
  relay/src/relay_app.cc
  relay/src/signals.cc
  relay/src/health.cc
  relay/src/journal_sink.cc
  relay/src/reload.cc
  relay/src/ops/ops_commands.cc
  relay/src/ops/ops_store.cc
  relay/src/ops/parked_gauge.cc
  relay/src/park_policy.cc)
# A relay that wakes (issue 10): the [wake] socket and its listener thread.
target_sources(room_outbox_relay PRIVATE relay/src/wake_socket.cc relay/src/wake_listener.cc)
if(NOT ROOM_OUTBOX_BUILD_TESTS)
  return()
endif()
target_sources(unit_tests PRIVATE
  tests/unit/config_test.cc
  tests/unit/duration_test.cc
  tests/unit/log_line_test.cc
  tests/unit/metrics_test.cc
  tests/unit/outbox_worker_test.cc
  tests/unit/outbox_worker_ahead_test.cc
  tests/unit/result_writer_test.cc
  tests/unit/retry_policy_test.cc
  tests/unit/room_pace_test.cc
  tests/unit/room_queues_test.cc)
target_sources(integration_tests PRIVATE
  tests/integration/metrics_server_test.cc
  tests/integration/relay_process_test.cc
  tests/integration/relay_overlap_test.cc
  tests/integration/systemd_units_test.cc)
# The process and unit tests run the built daemon.
add_dependencies(integration_tests outbox-relay)
# Parking and log volume (issue 9, worker side).
target_sources(unit_tests PRIVATE tests/unit/park_policy_test.cc tests/unit/parking_test.cc)
target_sources(integration_tests PRIVATE tests/integration/parking_daemon_test.cc)
# A relay that wakes (issue 10): the wake signal, the socket and its listener, the config key,
# and a real relay woken by a datagram.
target_sources(unit_tests PRIVATE
  tests/unit/config_wake_test.cc
  tests/unit/outbox_worker_wake_test.cc
  tests/unit/wake_signal_test.cc
  tests/unit/wake_socket_test.cc)
target_sources(integration_tests PRIVATE tests/integration/relay_wake_test.cc)
