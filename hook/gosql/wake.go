//go:build unix

package outboxsql

import (
	"errors"
	"net"
	"syscall"
)

// Wake sends one datagram to Options.WakeSocket (the relay's [wake] socket), so the relay starts
// a round at once instead of at its next poll_interval. Call it after the COMMIT of a
// transaction Write wrote pending rows into (Commit calls it itself). It never blocks: one
// non-blocking send, no wait for a full socket. The error only says why no datagram went (no
// socket configured, none bound at the path, its queue full); the rows go out at the relay's
// next poll either way, so callers may ignore it.
func (w *Writer) Wake() error {
	if w.opts.WakeSocket == "" {
		return errors.New("outboxsql: no wake socket configured")
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: w.opts.WakeSocket, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	// One attempt: returning true tells the runtime not to wait for the socket to drain.
	if err := raw.Write(func(fd uintptr) bool {
		_, sendErr = syscall.Write(int(fd), []byte{'w'})
		return true
	}); err != nil {
		return err
	}
	return sendErr
}
