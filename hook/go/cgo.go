package roomoutbox

// The C side of the binding: its version check and the shims that hand Go's callbacks to the C
// ABI. How the library is linked is in link_shared.go (the default) and link_static.go (the
// roomoutbox_static build tag); the trampolines themselves are in trampolines.go.

// #include <stdint.h>
// #include <stdlib.h>
// #include <room_outbox/c.h>
//
// #if !defined(ROOM_OUTBOX_C_VERSION) || ROOM_OUTBOX_C_VERSION < 0x01010000 || \
//     ROOM_OUTBOX_C_VERSION >= 0x02000000
// #error "roomoutbox needs room_outbox/c.h 1.1 or later (ROOM_OUTBOX_C_VERSION 0x01010000)"
// #endif
//
// extern room_outbox_status roomOutboxStatements(room_outbox_tx *tx, uintptr_t handle);
// extern void roomOutboxLog(uintptr_t handle, int32_t level, char *message, size_t len);
//
// static room_outbox_status room_outbox_go_statements(room_outbox_tx *tx, void *user_data) {
//   return roomOutboxStatements(tx, (uintptr_t)user_data);
// }
//
// static void room_outbox_go_log(void *user_data, int32_t level, const char *message,
//                                size_t len) {
//   roomOutboxLog((uintptr_t)user_data, level, (char *)message, len);
// }
//
// static room_outbox_status room_outbox_go_commit(room_outbox_hook *hook,
//                                                 const room_outbox_command *cmd,
//                                                 uintptr_t handle, room_outbox_result **result,
//                                                 room_outbox_error **err) {
//   return room_outbox_hook_commit(hook, cmd, handle != 0 ? room_outbox_go_statements : NULL,
//                                  (void *)handle, result, err);
// }
//
// static void room_outbox_go_set_log(room_outbox_options *opts, uintptr_t handle) {
//   room_outbox_options_set_log(opts, room_outbox_go_log, (void *)handle);
// }
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// cVersion is the C ABI this package is written for: ROOM_OUTBOX_C_VERSION's encoding
// 0xMMmmpp00. A library of another major, or an older one, is refused by Open.
const cVersion = 0x01010000

var (
	libraryOnce sync.Once
	libraryErr  error
)

// initLibrary checks the library's version and runs the process-wide init once per process.
// Go cannot call mysql_library_init and curl_global_init itself; the C ABI does.
func initLibrary() error {
	libraryOnce.Do(func() {
		v := int32(C.room_outbox_c_version())
		if v>>24 != cVersion>>24 || v < cVersion {
			libraryErr = fmt.Errorf("roomoutbox: libroom_outbox_hook has C ABI version %#08x, "+
				"this package needs %#08x (same major, not older)", v, cVersion)
			return
		}
		var cerr *C.room_outbox_error
		if status := C.room_outbox_library_init(&cerr); status != C.ROOM_OUTBOX_OK {
			libraryErr = statusError(status, cerr)
		}
	})
	return libraryErr
}

// commit runs room_outbox_hook_commit with the statements trampoline when handle is not 0.
func commit(hook *C.room_outbox_hook, cmd *C.room_outbox_command, handle cgo.Handle,
	result **C.room_outbox_result, cerr **C.room_outbox_error) C.room_outbox_status {
	return C.room_outbox_go_commit(hook, cmd, C.uintptr_t(handle), result, cerr)
}

// setLogger makes the log trampoline the options' log callback, with handle as its user data.
func setLogger(opts *C.room_outbox_options, handle cgo.Handle) {
	C.room_outbox_go_set_log(opts, C.uintptr_t(handle))
}

// withText calls fn with a C copy of s as a (pointer, length) argument, freed when fn returns
// (the C ABI copies what it keeps).
func withText(s string, fn func(*C.char, C.size_t) C.room_outbox_status) C.room_outbox_status {
	p := C.CString(s)
	defer C.free(unsafe.Pointer(p))
	return fn(p, C.size_t(len(s)))
}

// withName calls fn with a C copy of the key or field name.
func withName(name string, fn func(*C.char) C.room_outbox_status) C.room_outbox_status {
	p := C.CString(name)
	defer C.free(unsafe.Pointer(p))
	return fn(p)
}
