module github.com/room-outbox/room-outbox/hook/gosql

go 1.19
