# room_outbox_relay: everything of relay/src but main.cc (see relay/src/README.md), over
# room_outbox_core. It never links the hook library, nor sees its headers.
# The schema files, in order: embedded into the relay (relay/src/migrate/schema_steps.h) at build
# time, so outbox-relay migrate applies exactly what schema/ holds.
set(ROOM_OUTBOX_SCHEMA_FILES
  ${PROJECT_SOURCE_DIR}/schema/000_schema_version.sql
  ${PROJECT_SOURCE_DIR}/schema/001_room_command_log.sql
  ${PROJECT_SOURCE_DIR}/schema/002_room_outbox.sql
  ${PROJECT_SOURCE_DIR}/schema/003_parked.sql
  ${PROJECT_SOURCE_DIR}/schema/004_drop_count.sql
  ${PROJECT_SOURCE_DIR}/schema/005_im_budget_members.sql
  ${PROJECT_SOURCE_DIR}/schema/006_room_heads.sql
  ${PROJECT_SOURCE_DIR}/schema/007_pack_size.sql
  ${PROJECT_SOURCE_DIR}/schema/008_command_rows.sql
  ${PROJECT_SOURCE_DIR}/schema/009_room_schedule.sql
  ${PROJECT_SOURCE_DIR}/schema/010_relay_runs.sql
  ${PROJECT_SOURCE_DIR}/schema/011_attempts.sql)
set(ROOM_OUTBOX_SCHEMA_STEPS_CC ${PROJECT_BINARY_DIR}/generated/schema_steps.cc)
add_custom_command(OUTPUT ${ROOM_OUTBOX_SCHEMA_STEPS_CC}
  COMMAND ${CMAKE_COMMAND} -DOUT=${ROOM_OUTBOX_SCHEMA_STEPS_CC} "-DFILES=${ROOM_OUTBOX_SCHEMA_FILES}"
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_schema.cmake
  DEPENDS ${ROOM_OUTBOX_SCHEMA_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_schema.cmake
  COMMENT "Embedding schema/*.sql"
  VERBATIM)

add_library(room_outbox_relay STATIC
  relay/src/store/claim_plan.cc
  relay/src/store/mariadb_claim.cc
  relay/src/store/claim_reads.cc
  relay/src/store/claim_writes.cc
  relay/src/store/mariadb_relay_store.cc
  relay/src/store/node_lock.cc
  relay/src/store/relay_runs.cc
  relay/src/store/relay_marks.cc
  relay/src/store/attempt_history.cc
  relay/src/migrate/migrate.cc
  relay/src/migrate/migrate_command.cc
  relay/src/migrate/sql_split.cc
  ${ROOM_OUTBOX_SCHEMA_STEPS_CC}
  relay/src/worker/claim_ahead.cc
  relay/src/worker/claim_step.cc
  relay/src/worker/loop_clock.cc
  relay/src/worker/loop_waits.cc
  relay/src/worker/outbox_worker.cc
  relay/src/worker/outbox_worker_loop.cc
  relay/src/worker/expiry_policy.cc
  relay/src/worker/park_policy.cc
  relay/src/worker/worker_options.cc
  relay/src/worker/result_writer.cc
  relay/src/worker/retry_policy.cc
  relay/src/worker/room_pacing.cc
  relay/src/worker/room_queues.cc
  relay/src/worker/pack_rule.cc
  relay/src/worker/room_sender.cc
  relay/src/worker/unwritten_results.cc
  relay/src/worker/round_marks.cc
  relay/src/worker/wake_gap.cc
  relay/src/worker/worker_stats.cc
  relay/src/telemetry/accepted_socket.cc
  relay/src/telemetry/bounded_pool.cc
  relay/src/telemetry/connection_deadlines.cc
  relay/src/telemetry/health.cc
  relay/src/telemetry/log_line.cc
  relay/src/telemetry/metrics.cc
  relay/src/telemetry/metrics_server.cc
  relay/src/ops/drain_rates.cc
  relay/src/ops/ops_commands.cc
  relay/src/ops/ops_store.cc
  relay/src/ops/parked_gauge.cc
  relay/src/daemon/app_budget_share.cc
  relay/src/daemon/build_info.cc
  relay/src/daemon/command_line.cc
  relay/src/config/config.cc
  relay/src/config/config_render.cc
  relay/src/daemon/beat_on_use_clock.cc
  relay/src/daemon/journal_sink.cc
  relay/src/daemon/lease_takeover.cc
  relay/src/daemon/lifecycle_log.cc
  relay/src/daemon/node_lock_start.cc
  relay/src/daemon/read_only_watch.cc
  relay/src/daemon/relay_app.cc
  relay/src/daemon/relay_telemetry.cc
  relay/src/daemon/reload.cc
  relay/src/daemon/schema_wait.cc
  relay/src/daemon/signals.cc
  relay/src/daemon/wake_listener.cc
  relay/src/daemon/wake_socket.cc)
# relay/src is the relay's include root; hook/src is on no path here, and the fence root turns
# the hook's API headers into an #error (cmake/include_roots.cmake).
target_include_directories(room_outbox_relay
  PRIVATE ${ROOM_OUTBOX_RELAY_FENCE_ROOT} PUBLIC ${PROJECT_SOURCE_DIR}/relay/src)
target_compile_definitions(room_outbox_relay PRIVATE ROOM_OUTBOX_VERSION="${PROJECT_VERSION}")
target_link_libraries(room_outbox_relay
  PUBLIC room_outbox_core tomlplusplus::tomlplusplus spdlog::spdlog
         PkgConfig::SYSTEMD
         PkgConfig::HTTPLIB
  PRIVATE room_outbox_build_settings CLI11::CLI11)

add_executable(outbox-relay relay/src/main.cc)
target_include_directories(outbox-relay PRIVATE ${ROOM_OUTBOX_RELAY_FENCE_ROOT})
target_link_libraries(outbox-relay PRIVATE room_outbox_relay CLI11::CLI11 room_outbox_build_settings)
