package roomoutbox

// Level is the severity of a log line of the hook.
type Level int32

const (
	LevelDebug Level = iota
	LevelInfo
	LevelWarn
	LevelError
)

func (l Level) String() string {
	switch l {
	case LevelDebug:
		return "debug"
	case LevelInfo:
		return "info"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return "unknown"
}

// Option changes what Open reads from the config file.
type Option func(*openOptions)

type openOptions struct {
	settings []setting
	logger   func(Level, string)
	poolSize int
}

type setting struct {
	key, value string
}

// WithSetting sets one key by its relay.toml name ("mysql.port", "hook.sync_publish", "node_id"),
// after the file is read, with the file's validation: a string value as it is ("500ms",
// "inline"), numbers, booleans and arrays in TOML syntax ("3306", `["RoomCreated"]`). Open fails
// with an *Error naming the key when it is unknown or its value invalid.
func WithSetting(key, value string) Option {
	return func(o *openOptions) { o.settings = append(o.settings, setting{key, value}) }
}

// WithSecret gives a secret from memory instead of its file: key "mysql.password" or
// "tencent_im.secret_key". It is never logged and never in an error text.
func WithSecret(key, value string) Option {
	return WithSetting(key, value)
}

// WithLogger gives the hook a logger (by default it logs nothing). It is called on the
// goroutine of Open (the configuration's warnings) and of Commit and, with [hook] sync_publish =
// "background", from the hook's own thread: it must be safe for concurrent use and must not call
// the Hook.
func WithLogger(log func(level Level, line string)) Option {
	return func(o *openOptions) { o.logger = log }
}

// WithPoolSize sets how many members the Hook's pool holds (default 1): each is its own hook with
// its own database connection and HTTP connection to IM (two of each with
// sync_publish = "background"), so n Commits run at once and a Commit finding all n busy waits
// for one. Budget the database's connections for it. The members share what the process shares
// (the IM app's request budget and its membership row, the sync breaker): n members
// draw on one process budget, never n. Open refuses a size below 1.
func WithPoolSize(n int) Option {
	return func(o *openOptions) { o.poolSize = n }
}
