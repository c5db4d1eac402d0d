# Fuzz targets (tests/fuzz/) and their corpus replay in the normal suite.
#
# The target functions (tests/fuzz/fuzz_targets.cc) are built in every configuration: the unit
# tests replay each checked-in corpus file through them (tests/unit/fuzz_corpus_test.cc). With
# -DROOM_OUTBOX_FUZZ=ON (clang only; `make fuzz` configures build-fuzz/ with it, ASan+UBSan on) one
# libFuzzer executable per target is added: fuzz_<name>.

set(ROOM_OUTBOX_FUZZ_TARGETS
  envelope_decode:EnvelopeDecode
  envelope_roundtrip:EnvelopeRoundTrip
  im_response:ImResponse
  config_load:ConfigLoad
  duration:Duration
  usersig:UserSig
  log_line:LogLineRender)

add_library(room_outbox_fuzz_targets STATIC tests/fuzz/fuzz_targets.cc)
target_include_directories(room_outbox_fuzz_targets PUBLIC ${PROJECT_SOURCE_DIR}/tests/fuzz)
target_link_libraries(room_outbox_fuzz_targets
  PUBLIC room_outbox_relay PRIVATE room_outbox_build_settings)

if(TARGET unit_tests)
  target_sources(unit_tests PRIVATE tests/unit/fuzz_corpus_test.cc tests/unit/input_limits_test.cc)
  target_link_libraries(unit_tests PRIVATE room_outbox_fuzz_targets)
  target_compile_definitions(unit_tests PRIVATE
    ROOM_OUTBOX_FUZZ_CORPUS_DIR="${PROJECT_SOURCE_DIR}/tests/fuzz/corpus")
endif()

if(ROOM_OUTBOX_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ROOM_OUTBOX_FUZZ needs clang (CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  foreach(entry IN LISTS ROOM_OUTBOX_FUZZ_TARGETS)
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 name)
    list(GET parts 1 function)
    add_executable(fuzz_${name} tests/fuzz/fuzz_main.cc)
    target_compile_definitions(fuzz_${name} PRIVATE ROOM_OUTBOX_FUZZ_TARGET=${function})
    target_link_libraries(fuzz_${name} PRIVATE room_outbox_fuzz_targets room_outbox_build_settings)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    list(APPEND _room_outbox_fuzzers fuzz_${name})
  endforeach()
  add_custom_target(fuzzers DEPENDS ${_room_outbox_fuzzers})
endif()
