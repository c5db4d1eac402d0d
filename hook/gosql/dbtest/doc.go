// Package dbtest holds the tests of package outboxsql (hook/gosql) against a real MariaDB, a
// real outbox-relay process and the im-stub stand-in for Tencent IM: a module of its own, so
// that the package's module requires nothing, while these tests use the MySQL driver Debian
// ships (golang-github-go-sql-driver-mysql-dev) through a replace directive. Run them with
// hook/gosql/run-gosql-test.sh (ctest: GoSqlPackageTest.*).
package dbtest
