# Benchmarks (make bench; scripts/bench.sh runs outbox-bench against a private MariaDB). Not a
# test: it prints figures and never asserts on speed. Built by `make bench` only (not by `all`).
add_executable(outbox-bench EXCLUDE_FROM_ALL
  tests/bench/alloc_counter.cc
  tests/bench/bench_database.cc
  tests/bench/bench_relay.cc
  tests/bench/bench_support.cc
  tests/bench/busy_room_bench.cc
  tests/bench/child_process.cc
  tests/bench/claim_bench.cc
  tests/bench/commit_bench.cc
  tests/bench/wake_path_bench.cc
  tests/bench/commit_floor.cc
  tests/bench/commit_support.cc
  tests/bench/cost_bench.cc
  tests/bench/dialect_bench.cc
  tests/bench/drain_bench.cc
  tests/bench/hot_room_claim_bench.cc
  tests/bench/idle_bench.cc
  tests/bench/outbox_bench.cc
  tests/bench/pack_drain_bench.cc
  tests/bench/recovery_bench.cc
  tests/bench/report.cc
  tests/bench/scale_bench.cc
  tests/bench/storm_bench.cc
  tests/bench/sync_mode_bench.cc
  tests/bench/thread_bench.cc
  tests/bench/worker_harness.cc)
target_link_libraries(outbox-bench PRIVATE room_outbox_relay room_outbox_test_support
  CLI11::CLI11 room_outbox_build_settings)
# outbox-bench runs outbox-relay (benchmarks 5, 10, 11 and 16).
add_dependencies(outbox-bench outbox-relay)
