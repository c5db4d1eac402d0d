# Tencent IM publisher (libcurl), UserSig, and the fake IM server used by tests, demo and bench.
target_sources(room_outbox_hook PRIVATE
  hook/src/tencent/curl_error.cc
  hook/src/tencent/im_breaker.cc
  hook/src/tencent/im_request.cc
  hook/src/tencent/im_response.cc
  hook/src/tencent/process_rate_budget.cc
  hook/src/tencent/rate_budget.cc
  hook/src/tencent/tencent_im_publisher.cc
  hook/src/tencent/usersig.cc)

if(ROOM_OUTBOX_BUILD_TESTS)
  target_sources(room_outbox_test_support PRIVATE tests/support/fake_im_server.cc)

  target_sources(unit_tests PRIVATE
    tests/unit/config_tencent_im_test.cc
    tests/unit/curl_error_test.cc
    tests/unit/im_breaker_test.cc
    tests/unit/im_request_test.cc
    tests/unit/im_response_test.cc
    tests/unit/process_rate_budget_test.cc
    tests/unit/rate_budget_test.cc
    tests/unit/usersig_test.cc)

  target_sources(integration_tests PRIVATE
    tests/integration/tencent_im_publisher_test.cc
    tests/integration/tencent_im_scopes_test.cc)

  # The fake IM server as a process, for the demo and benchmarks.
  add_executable(im-stub tests/support/im_stub_main.cc)
  target_link_libraries(im-stub PRIVATE room_outbox_test_support CLI11::CLI11
    room_outbox_build_settings)
endif()
