# room-sim: a sample room service. It links the hook as a room service gets it (the installed
# archive, room_outbox_hook_dist: public headers only) and reads its settings with the public
# LoadHookOptions.
add_library(room_outbox_sim STATIC sim/room_cell.cc)
target_include_directories(room_outbox_sim PUBLIC ${PROJECT_SOURCE_DIR}/sim)
target_include_directories(room_outbox_sim PUBLIC ${PROJECT_SOURCE_DIR}/hook/include)
target_link_libraries(room_outbox_sim PUBLIC nlohmann_json::nlohmann_json
  PRIVATE room_outbox_build_settings)

add_executable(room-sim sim/room_sim_main.cc)
target_link_libraries(room-sim PRIVATE room_outbox_sim room_outbox_hook_dist CLI11::CLI11
  room_outbox_build_settings)
