# The tests of the hook as other languages link it (LABELS integration, with the private MariaDB
# of scripts/run-tests.sh): the C ABI test (tests/c_abi) and, outside sanitizer builds, the Go
# package's `go test` (hook/go). Both build against the hook as installed, which the HookInstall
# fixture puts under build/hook-install.
add_test(NAME HookInstall.Setup
  COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${PROJECT_BINARY_DIR}/hook-install
          ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix /usr/local)
set_tests_properties(HookInstall.Setup PROPERTIES FIXTURES_SETUP hook_install LABELS integration)

add_test(NAME CAbiTest.CProgramAgainstInstalledHook
  COMMAND ${PROJECT_SOURCE_DIR}/tests/c_abi/run-c-abi-test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(CAbiTest.CProgramAgainstInstalledHook PROPERTIES
  FIXTURES_REQUIRED hook_install LABELS integration)
if(ROOM_OUTBOX_SANITIZE)
  # A program linking the sanitized library needs the same runtime.
  string(REPLACE ";" " " _room_outbox_c_abi_flags "${_room_outbox_san_flags}")
  set_property(TEST CAbiTest.CProgramAgainstInstalledHook APPEND PROPERTY
    ENVIRONMENT "ROOM_OUTBOX_CONSUMER_CXXFLAGS=${_room_outbox_c_abi_flags}")
endif()

# The Go package: a cgo program cannot load a sanitizer-instrumented library unless the Go
# toolchain instruments it too, so sanitizer builds run the C test only.
find_program(ROOM_OUTBOX_GO go)
if(NOT ROOM_OUTBOX_SANITIZE)
  if(NOT ROOM_OUTBOX_GO)
    message(FATAL_ERROR "go not found: make deps installs golang-go")
  endif()
  add_test(NAME GoPackageTest.GoTestAgainstInstalledHook
    COMMAND ${PROJECT_SOURCE_DIR}/hook/go/run-go-test.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(GoPackageTest.GoTestAgainstInstalledHook PROPERTIES
    FIXTURES_REQUIRED hook_install LABELS integration TIMEOUT 600)
endif()
