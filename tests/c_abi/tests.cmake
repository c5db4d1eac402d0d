# The tests of the hook as other languages link it (LABELS integration, with the private MariaDB
# of scripts/run-tests.sh): the C ABI test (tests/c_abi) and, outside sanitizer builds, the Go
# package's `go test` (hook/go), both against the hook as installed, which the HookInstall
# fixture puts under build/hook-install; and the ABI check of the shared library (tests/abi).
# All of them also carry no_sql: none follows ROOM_OUTBOX_TEST_MYSQL_DIALECT, so the MySQL-set
# pass of `make test` leaves them out.
add_test(NAME HookInstall.Setup
  COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${PROJECT_BINARY_DIR}/hook-install
          ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix /usr/local)
set_tests_properties(HookInstall.Setup PROPERTIES
  FIXTURES_SETUP hook_install LABELS "integration;no_sql")

add_test(NAME CAbiTest.CProgramAgainstInstalledHook
  COMMAND ${PROJECT_SOURCE_DIR}/tests/c_abi/run-c-abi-test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(CAbiTest.CProgramAgainstInstalledHook PROPERTIES
  FIXTURES_REQUIRED hook_install LABELS "integration;no_sql")
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
    FIXTURES_REQUIRED hook_install LABELS "integration;no_sql" TIMEOUT 600)
endif()

# The ABI of libroom_outbox_hook.so against its committed baseline (tests/abi/check-abi.sh,
# abidiff of abigail-tools). The baseline describes the regular build; a sanitizer build's
# library differs in ways that do not matter here.
if(NOT ROOM_OUTBOX_SANITIZE)
  find_program(ROOM_OUTBOX_ABIDIFF abidiff)
  if(NOT ROOM_OUTBOX_ABIDIFF)
    message(FATAL_ERROR "abidiff not found: make deps installs abigail-tools")
  endif()
  add_test(NAME AbiTest.SharedLibraryKeepsTheAbiOfItsSoname
    COMMAND ${PROJECT_SOURCE_DIR}/tests/abi/check-abi.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(AbiTest.SharedLibraryKeepsTheAbiOfItsSoname PROPERTIES
    LABELS "integration;no_sql" TIMEOUT 600)
  # The exports of libroom_outbox_hook.so against the public headers' declarations
  # (tests/abi/check-exports.sh: clang's AST of the headers, `nm -D`), and the check refusing a
  # library that lacks a declaration and exports an undeclared symbol.
  add_test(NAME AbiTest.EveryPublicDeclarationIsExportedAndNothingElse
    COMMAND ${PROJECT_SOURCE_DIR}/tests/abi/check-exports.sh ${PROJECT_BINARY_DIR})
  add_test(NAME AbiTest.ExportCheckRefusesAWrongLibrary
    COMMAND ${PROJECT_SOURCE_DIR}/tests/abi/check-exports.sh --self-test)
  set_tests_properties(AbiTest.EveryPublicDeclarationIsExportedAndNothingElse
    AbiTest.ExportCheckRefusesAWrongLibrary PROPERTIES LABELS "integration;no_sql" TIMEOUT 120)
endif()
