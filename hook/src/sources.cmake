# room_outbox_hook: the commit path, sync and background publish, and the C ABI over them (see
# hook/src/README.md). In the tree it links room_outbox_core. What a room service gets is built
# from the objects of both, and nothing of the relay, twice over:
#   room_outbox_hook_dist    the static archive libroom_outbox_hook.a
#   room_outbox_hook_shared  the shared library libroom_outbox_hook.so.1 (SONAME)
add_library(room_outbox_hook STATIC
  hook/src/background_publisher.cc
  hook/src/caller_statement_check.cc
  hook/src/commit_checks.cc
  hook/src/commit_prepare.cc
  hook/src/app_budget_membership.cc
  hook/src/create_hook.cc
  hook/src/hook_counters.cc
  hook/src/hook_impl.cc
  hook/src/hook_options_defaults.cc
  hook/src/sync_skip.cc
  hook/src/hook_metrics_text.cc
  hook/src/late_marks.cc
  hook/src/library_init.cc
  hook/src/load_hook_options.cc
  hook/src/lost_commit.cc
  hook/src/room_backoff.cc
  hook/src/sync_breaker.cc
  hook/src/sync_hand_back.cc
  hook/src/sync_packs.cc
  hook/src/sync_publish.cc
  hook/src/transaction.cc
  hook/src/wake_sender.cc
  hook/src/c_api/c_command.cc
  hook/src/c_api/c_errors.cc
  hook/src/c_api/c_hook.cc
  hook/src/c_api/c_metrics.cc
  hook/src/c_api/c_options.cc
  hook/src/c_api/option_setter.cc
  hook/src/c_api/c_tx.cc
  hook/src/store/mariadb_hook_store.cc
  hook/src/store/outbox_insert.cc)
# hook/src is the hook's own include root: no other library sees it (tests add it themselves).
target_include_directories(room_outbox_hook PRIVATE ${PROJECT_SOURCE_DIR}/hook/src)
target_link_libraries(room_outbox_hook PUBLIC room_outbox_core PRIVATE room_outbox_build_settings)
set_target_properties(room_outbox_hook PROPERTIES OUTPUT_NAME room_outbox_hook_only)

# One object set for both: position-independent, and only what the public headers mark
# ROOM_OUTBOX_EXPORT (room_outbox/export.h) is visible outside the shared library.
set_target_properties(room_outbox_core room_outbox_hook PROPERTIES
  POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

# The ABI counter of libroom_outbox_hook.so: set by hand, bumped when a symbol goes or a
# signature or an exported type's layout changes (a new HookOptions member counts), for the C
# ABI and the C++ API alike. tests/abi/ checks it against the committed baseline.
set(ROOM_OUTBOX_SOVERSION 1)
# The C libraries the hook calls; PRIVATE to both libraries (the public headers are std-only).
set(ROOM_OUTBOX_HOOK_C_LIBRARIES PkgConfig::MARIADB CURL::libcurl OpenSSL::Crypto ZLIB::ZLIB
  tomlplusplus::tomlplusplus Threads::Threads)

add_library(room_outbox_hook_dist STATIC
  $<TARGET_OBJECTS:room_outbox_core> $<TARGET_OBJECTS:room_outbox_hook>)
target_include_directories(room_outbox_hook_dist
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hook/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(room_outbox_hook_dist PRIVATE ${ROOM_OUTBOX_HOOK_C_LIBRARIES})
set_target_properties(room_outbox_hook_dist PROPERTIES OUTPUT_NAME room_outbox_hook)

add_library(room_outbox_hook_shared SHARED
  $<TARGET_OBJECTS:room_outbox_core> $<TARGET_OBJECTS:room_outbox_hook>)
target_include_directories(room_outbox_hook_shared
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hook/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(room_outbox_hook_shared PRIVATE ${ROOM_OUTBOX_HOOK_C_LIBRARIES})
set(ROOM_OUTBOX_HOOK_MAP ${PROJECT_SOURCE_DIR}/hook/src/libroom_outbox_hook.map)
target_link_options(room_outbox_hook_shared PRIVATE
  "LINKER:--version-script=${ROOM_OUTBOX_HOOK_MAP}")
if(NOT ROOM_OUTBOX_SANITIZE)
  # Every symbol resolved at link time (project rule); in sanitizer builds the runtime's symbols
  # are resolved by the executable instead.
  target_link_options(room_outbox_hook_shared PRIVATE "LINKER:-z,defs")
endif()
set_target_properties(room_outbox_hook_shared PROPERTIES
  OUTPUT_NAME room_outbox_hook
  SOVERSION ${ROOM_OUTBOX_SOVERSION}
  VERSION ${ROOM_OUTBOX_SOVERSION}.${PROJECT_VERSION_MINOR}.${PROJECT_VERSION_PATCH}
  LINK_DEPENDS ${ROOM_OUTBOX_HOOK_MAP})
