# room_outbox_hook: the commit path, sync and background publish (see hook/src/README.md). In the
# tree it links room_outbox_core; the installed archive (room_outbox_hook_dist, installed as
# libroom_outbox_hook.a) holds the objects of both, and nothing of the relay.
add_library(room_outbox_hook STATIC
  hook/src/background_publisher.cc
  hook/src/commit_checks.cc
  hook/src/commit_prepare.cc
  hook/src/create_hook.cc
  hook/src/hook_impl.cc
  hook/src/load_hook_options.cc
  hook/src/lost_commit.cc
  hook/src/sync_breaker.cc
  hook/src/sync_hand_back.cc
  hook/src/sync_publish.cc
  hook/src/wake_sender.cc
  hook/src/mysql/mariadb_hook_store.cc
  hook/src/mysql/outbox_insert.cc)
target_link_libraries(room_outbox_hook PUBLIC room_outbox_core PRIVATE room_outbox_build_settings)
set_target_properties(room_outbox_hook PROPERTIES OUTPUT_NAME room_outbox_hook_only)

# What a room service links: hook + core, std-only public headers, C libraries PRIVATE.
add_library(room_outbox_hook_dist STATIC
  $<TARGET_OBJECTS:room_outbox_core> $<TARGET_OBJECTS:room_outbox_hook>)
target_include_directories(room_outbox_hook_dist
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hook/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(room_outbox_hook_dist
  PRIVATE PkgConfig::MARIADB CURL::libcurl OpenSSL::Crypto ZLIB::ZLIB tomlplusplus::tomlplusplus
          Threads::Threads)
set_target_properties(room_outbox_hook_dist PROPERTIES OUTPUT_NAME room_outbox_hook)
