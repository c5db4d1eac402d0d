//go:build !roomoutbox_static

package roomoutbox

// The default link: the shared libroom_outbox_hook.so.1 through its pkg-config file, which
// brings the C libraries along at run time.

// #cgo pkg-config: room_outbox_hook
import "C"
