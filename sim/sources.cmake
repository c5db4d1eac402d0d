# room-sim: the sample room-service built on the hook (demo and benchmark load source).
add_library(room_outbox_sim STATIC sim/room_cell.cc)
target_include_directories(room_outbox_sim PUBLIC ${PROJECT_SOURCE_DIR}/sim)
target_link_libraries(room_outbox_sim PUBLIC room_outbox_hook nlohmann_json::nlohmann_json
  PRIVATE room_outbox_build_settings)

add_executable(room-sim sim/room_sim_main.cc)
target_link_libraries(room-sim PRIVATE room_outbox_sim room_outbox_relay CLI11::CLI11
  room_outbox_build_settings)
if(ROOM_OUTBOX_BUILD_TESTS)
  target_sources(unit_tests PRIVATE tests/unit/room_cell_test.cc)
  target_link_libraries(unit_tests PRIVATE room_outbox_sim)
  # tests/integration/room_sim_test.cc runs the binary.
  add_dependencies(integration_tests room-sim)
endif()
