add_executable(room-sim sim/room_sim_main.cc)
target_link_libraries(room-sim PRIVATE room_outbox_internal room_outbox_build_settings)
