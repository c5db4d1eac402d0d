package roomoutbox

import (
	"fmt"
	"log"
	"strconv"
	"strings"
	"time"
)

// The typed options: each sets one relay.toml key through WithSetting, so Open validates it
// exactly as the file's value and names the key when it refuses it ("mysql.port: must be
// 1..65535, got 0"). WithSetting stays for every other key.

// WithMySQLHost sets [mysql] host (TCP; a socket set by WithMySQLSocket wins).
func WithMySQLHost(host string) Option { return WithSetting("mysql.host", host) }

// WithMySQLPort sets [mysql] port.
func WithMySQLPort(port int) Option { return WithSetting("mysql.port", strconv.Itoa(port)) }

// WithMySQLSocket sets [mysql] socket, a unix socket path used instead of host and port.
func WithMySQLSocket(path string) Option { return WithSetting("mysql.socket", path) }

// WithMySQLUser sets [mysql] user.
func WithMySQLUser(user string) Option { return WithSetting("mysql.user", user) }

// WithMySQLDatabase sets [mysql] database.
func WithMySQLDatabase(name string) Option { return WithSetting("mysql.database", name) }

// WithMySQLPassword gives the database password from memory (WithSecret "mysql.password"): never
// logged, never in an error text.
func WithMySQLPassword(password string) Option { return WithSecret("mysql.password", password) }

// WithTencentIMSecretKey gives the IM secret key from memory (WithSecret
// "tencent_im.secret_key").
func WithTencentIMSecretKey(key string) Option { return WithSecret("tencent_im.secret_key", key) }

// WithNodeID sets node_id, the envelope's producing node.
func WithNodeID(id string) Option { return WithSetting("node_id", id) }

// WithGroupIDPrefix sets [tencent_im] group_id_prefix (IM GroupId = prefix + room_id).
func WithGroupIDPrefix(prefix string) Option {
	return WithSetting("tencent_im.group_id_prefix", prefix)
}

// WithSkipEventTypes sets [tencent_im] skip_event_types, the event types never sent to IM (none
// given: every type is sent).
func WithSkipEventTypes(types ...string) Option {
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = tomlString(t)
	}
	return WithSetting("tencent_im.skip_event_types", "["+strings.Join(quoted, ", ")+"]")
}

// SyncPublishMode is [hook] sync_publish.
type SyncPublishMode string

const (
	// SyncInline: Commit publishes the events itself before it returns (the default).
	SyncInline SyncPublishMode = "inline"
	// SyncBackground: Commit returns after COMMIT (Queued); a thread of the hook publishes.
	SyncBackground SyncPublishMode = "background"
	// SyncOff: no sync publish; outbox-relay alone delivers.
	SyncOff SyncPublishMode = "off"
)

// WithSyncPublish sets [hook] sync_publish.
func WithSyncPublish(mode SyncPublishMode) Option {
	return WithSetting("hook.sync_publish", string(mode))
}

// WithSyncPublishTimeout sets [hook] sync_publish_timeout, in whole milliseconds (a finer part is
// dropped).
func WithSyncPublishTimeout(d time.Duration) Option {
	return WithSetting("hook.sync_publish_timeout", fmt.Sprintf("%dms", d.Milliseconds()))
}

// WithWakeSocket sets [wake] socket, the relay's wake socket the hook sends a datagram to when a
// commit leaves rows for the relay.
func WithWakeSocket(path string) Option { return WithSetting("wake.socket", path) }

// WithStdLogger gives the hook a standard *log.Logger: each line is written as
// "roomoutbox: <level>: <line>" through l.Print, which is safe for concurrent use. For log/slog
// (Go 1.21+), use WithLogger with the one-line adapter of the package documentation.
func WithStdLogger(l *log.Logger) Option {
	return WithLogger(func(level Level, line string) { l.Print("roomoutbox: ", level, ": ", line) })
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
