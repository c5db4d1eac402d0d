module github.com/room-outbox/room-outbox/hook/go

go 1.19
