//go:build !unix

package outboxsql

import "errors"

// Wake needs unix datagram sockets; elsewhere it sends nothing and the relay finds the rows at
// its next poll_interval.
func (w *Writer) Wake() error {
	return errors.New("outboxsql: wake-ups need unix datagram sockets")
}
