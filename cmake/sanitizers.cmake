# Sanitizer builds: -DROOM_OUTBOX_SANITIZE=address,undefined (make test-sanitize) or =thread
# (make test-tsan). Applies to every target defined after this file is included, so it is included
# before the first add_library. Tests that cannot run under a sanitizer (e.g. LD_PRELOAD of
# libfaketime next to the ASan runtime) check ROOM_OUTBOX_SANITIZED and GTEST_SKIP with a reason.
option(ROOM_OUTBOX_FUZZ "Build the libFuzzer executables of tests/fuzz (needs clang)" OFF)
set(ROOM_OUTBOX_SANITIZE "" CACHE STRING
  "Comma-separated -fsanitize= list (address,undefined or thread); empty: none")

if(ROOM_OUTBOX_SANITIZE)
  set(_room_outbox_san_flags -fsanitize=${ROOM_OUTBOX_SANITIZE} -fno-omit-frame-pointer)
  if(ROOM_OUTBOX_SANITIZE MATCHES "undefined")
    # A UB report is a test failure, not a warning on stderr.
    list(APPEND _room_outbox_san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_room_outbox_san_flags})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's flow analysis under -fsanitize=address reports -Wmaybe-uninitialized inside
    # libstdc++'s own std::regex and std::function (a known false positive of instrumented
    # builds); it stays a warning there, and an error in the normal build.
    add_compile_options(-Wno-error=maybe-uninitialized)
  endif()
  if(ROOM_OUTBOX_FUZZ)
    # Coverage instrumentation for libFuzzer in every library the fuzz targets link.
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
  add_link_options(-fsanitize=${ROOM_OUTBOX_SANITIZE})
  add_compile_definitions(ROOM_OUTBOX_SANITIZED=1)
  if(ROOM_OUTBOX_SANITIZE MATCHES "thread")
    add_compile_definitions(ROOM_OUTBOX_SANITIZED_THREAD=1)
  endif()
  if(ROOM_OUTBOX_SANITIZE MATCHES "address")
    add_compile_definitions(ROOM_OUTBOX_SANITIZED_ADDRESS=1)
  endif()
  message(STATUS "room-outbox: sanitizers ${ROOM_OUTBOX_SANITIZE}")
endif()

# A room-service linking the installed (sanitized) hook needs the same runtime: the install test
# builds its consumer with these flags. Deferred to the end of the directory, where the test
# exists.
function(_room_outbox_sanitize_install_test)
  if(TEST InstallTest.HookBuildsFromItsPkgConfigFile)
    string(REPLACE ";" " " flags "${_room_outbox_san_flags}")
    set_property(TEST InstallTest.HookBuildsFromItsPkgConfigFile APPEND PROPERTY
      ENVIRONMENT "ROOM_OUTBOX_CONSUMER_CXXFLAGS=${flags}")
  endif()
endfunction()
# TSan: every executable gets the pthread_mutex_clocklock shim (tests/support/tsan_clocklock.cc
# says why); the integration test executables through the object library they all link.
function(_room_outbox_tsan_clocklock_shim)
  foreach(target outbox-relay room-sim im-stub unit_tests room_outbox_integration_environment
                 outbox-bench)
    if(TARGET ${target})
      target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support/tsan_clocklock.cc)
    endif()
  endforeach()
endfunction()
if(ROOM_OUTBOX_SANITIZE)
  cmake_language(DEFER CALL _room_outbox_sanitize_install_test)
  if(ROOM_OUTBOX_SANITIZE MATCHES "thread")
    cmake_language(DEFER CALL _room_outbox_tsan_clocklock_shim)
  endif()
endif()
