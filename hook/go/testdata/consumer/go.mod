module example.com/room-service

go 1.19

require github.com/room-outbox/room-outbox/hook/go v0.0.0

// Until the repository is published: the package from a checkout (docs/hook.md, "The Go package").
replace github.com/room-outbox/room-outbox/hook/go => ../..
