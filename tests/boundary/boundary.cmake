# The one-way dependencies (hook -> core <- relay, cmake/include_roots.cmake) as tests: each probe
# is an object library outside `all`, compiled with the include roots of the side it stands for,
# and the test builds it. A forbidden include must fail with the error that names it; the allowed
# probes must compile, so a failure cannot come from a broken probe.
function(room_outbox_boundary_probe name side source)
  add_library(boundary_${name} OBJECT EXCLUDE_FROM_ALL tests/boundary/${source})
  if(side STREQUAL "relay")
    target_include_directories(boundary_${name} PRIVATE ${ROOM_OUTBOX_RELAY_FENCE_ROOT})
    target_link_libraries(boundary_${name} PRIVATE room_outbox_relay room_outbox_build_settings)
  else()
    target_include_directories(boundary_${name} PRIVATE ${ROOM_OUTBOX_CORE_FENCE_ROOT})
    target_link_libraries(boundary_${name} PRIVATE room_outbox_core room_outbox_build_settings)
  endif()
endfunction()

function(room_outbox_boundary_test test_name probe expected)
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target boundary_${probe})
  set_tests_properties(${test_name} PROPERTIES LABELS unit RESOURCE_LOCK boundary_build
    ${expected})
endfunction()

room_outbox_boundary_probe(relay_includes_hook_source relay relay_includes_hook_source.cc)
room_outbox_boundary_probe(relay_includes_hook_api relay relay_includes_hook_api.cc)
room_outbox_boundary_probe(core_includes_hook_api core core_includes_hook_api.cc)
room_outbox_boundary_probe(relay_allowed relay relay_allowed.cc)
room_outbox_boundary_probe(core_allowed core core_allowed.cc)

room_outbox_boundary_test(BoundaryTest.ARelaySourceCannotIncludeTheHooksSources
  relay_includes_hook_source "PASS_REGULAR_EXPRESSION;hook_impl\\.h: No such file or directory")
room_outbox_boundary_test(BoundaryTest.ARelaySourceCannotIncludeTheHooksApi
  relay_includes_hook_api "PASS_REGULAR_EXPRESSION;the relay must not include room_outbox/hook\\.h")
room_outbox_boundary_test(BoundaryTest.ACoreSourceCannotIncludeTheHooksApi
  core_includes_hook_api "PASS_REGULAR_EXPRESSION;core must not include room_outbox/hook\\.h")
room_outbox_boundary_test(BoundaryTest.ARelaySourceMayIncludeCoreAndTheVocabulary relay_allowed "")
room_outbox_boundary_test(BoundaryTest.ACoreSourceMayIncludeTheVocabulary core_allowed "")
