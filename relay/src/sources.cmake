# outbox-relay: the relay library (everything but main.cc) and its tests.
target_sources(room_outbox_relay PRIVATE
  relay/src/build_info.cc
  relay/src/config.cc
  relay/src/duration.cc
  relay/src/log_line.cc
  relay/src/metrics.cc
  relay/src/outbox_worker.cc)
target_sources(unit_tests PRIVATE
  tests/unit/outbox_worker_test.cc)
