# The pure-Go package (hook/gosql, no cgo): go vet and go test of the package, of its tests
# against the private MariaDB with a real outbox-relay and im-stub (hook/gosql/dbtest) and of its
# example service, then a CGO_ENABLED=0 build of the example (run-gosql-test.sh). It writes SQL of
# its own and its relay follows ROOM_OUTBOX_TEST_MYSQL_DIALECT, so it runs in the MySQL-set pass
# too (label integration, not no_sql). Not in sanitizer builds: the Go side is not instrumented
# and the relay's sanitized runs are covered by the C++ suites.
if(NOT ROOM_OUTBOX_SANITIZE)
  add_test(NAME GoSqlPackageTest.PureGoWriterDeliveredByARealRelay
    COMMAND ${PROJECT_SOURCE_DIR}/hook/gosql/run-gosql-test.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(GoSqlPackageTest.PureGoWriterDeliveredByARealRelay PROPERTIES
    LABELS integration TIMEOUT 600)
endif()
