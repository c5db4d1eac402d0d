module github.com/room-outbox/room-outbox/hook/gosql/example

go 1.19

require (
	github.com/go-sql-driver/mysql v1.5.0
	github.com/room-outbox/room-outbox/hook/gosql v0.0.0
)

// Offline: the package from this checkout and the MySQL driver from Debian's
// golang-github-go-sql-driver-mysql-dev (no module download). A service of your own replaces the
// package the same way until the repository is published (docs/hook.md).
replace (
	github.com/go-sql-driver/mysql => /usr/share/gocode/src/github.com/go-sql-driver/mysql
	github.com/room-outbox/room-outbox/hook/gosql => ../
)
