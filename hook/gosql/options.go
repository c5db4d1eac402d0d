package outboxsql

import (
	"fmt"
	"os"
	"strings"
)

// Priority is an IM message's MsgPriority, spelled as Tencent IM and relay.toml spell it.
type Priority string

const (
	High   Priority = "High"
	Normal Priority = "Normal"
	Low    Priority = "Low"
)

// DefaultMaxBodyBytes is [tencent_im] max_body_bytes's default: Tencent's 12 KB body limit.
const DefaultMaxBodyBytes = 12288

// DefaultSkipEventTypes are the event types never sent to IM unless Options.SkipEventTypes
// says otherwise ([tencent_im] skip_event_types' default).
func DefaultSkipEventTypes() []string {
	return []string{"RoomCreated", "RoomHeatChanged", "RoomRankChanged"}
}

// Options are the settings of a Writer. Each field is the relay.toml key of the same meaning,
// which the relay delivering the rows must share: set them to what the relay's config says.
type Options struct {
	// NodeID is the envelope's node_id (top-level node_id); "" means the host name.
	NodeID string
	// GroupIDPrefix: the IM GroupId of a room is GroupIDPrefix + room_id
	// ([tencent_im] group_id_prefix).
	GroupIDPrefix string
	// SkipEventTypes are never sent to IM: their rows are written published
	// ([tencent_im] skip_event_types). nil means DefaultSkipEventTypes(); an empty non-nil slice
	// means every type is sent.
	SkipEventTypes []string
	// MaxBodyBytes bounds the IM request body of every event sent to IM
	// ([tencent_im] max_body_bytes); 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int
	// MsgPriority of every message unless PriorityByType names its event type
	// ([tencent_im] msg_priority, [tencent_im.priority_by_type]); "" means High. The body-size
	// check counts the priority's name.
	MsgPriority    Priority
	PriorityByType map[string]Priority
	// WakeSocket is the relay's [wake] socket, an absolute path; "" sends no wake-ups (the relay
	// finds the rows at its next poll_interval).
	WakeSocket string
}

// maxWakePathBytes is what a unix socket's sun_path holds, its NUL excluded.
const maxWakePathBytes = 107

// normalized fills the defaults and checks the values; the error names the field.
func (o Options) normalized() (Options, error) {
	if o.NodeID == "" {
		host, err := os.Hostname()
		if err != nil {
			return o, &Error{Code: CodeInvalidArgument, Message: "Options.NodeID is empty and the host name is unreadable", Err: err}
		}
		o.NodeID = host
	}
	if o.SkipEventTypes == nil {
		o.SkipEventTypes = DefaultSkipEventTypes()
	} else {
		o.SkipEventTypes = append([]string(nil), o.SkipEventTypes...)
	}
	if o.MaxBodyBytes < 0 {
		return o, invalid(fmt.Sprintf("Options.MaxBodyBytes: must be at least 0, got %d", o.MaxBodyBytes))
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MsgPriority == "" {
		o.MsgPriority = High
	}
	if !o.MsgPriority.valid() {
		return o, invalid(fmt.Sprintf("Options.MsgPriority: must be High, Normal or Low, got %q", string(o.MsgPriority)))
	}
	byType := make(map[string]Priority, len(o.PriorityByType))
	for t, p := range o.PriorityByType {
		if !p.valid() {
			return o, invalid(fmt.Sprintf("Options.PriorityByType[%q]: must be High, Normal or Low, got %q", t, string(p)))
		}
		byType[t] = p
	}
	o.PriorityByType = byType
	if problem := wakePathProblem(o.WakeSocket); problem != "" {
		return o, invalid("Options.WakeSocket: " + problem)
	}
	return o, nil
}

func (p Priority) valid() bool { return p == High || p == Normal || p == Low }

// priorityFor is the MsgPriority of an event type.
func (o *Options) priorityFor(eventType string) Priority {
	if p, ok := o.PriorityByType[eventType]; ok {
		return p
	}
	return o.MsgPriority
}

// sends reports whether events of the type go to IM.
func (o *Options) sends(eventType string) bool {
	for _, t := range o.SkipEventTypes {
		if t == eventType {
			return false
		}
	}
	return true
}

// wakePathProblem is core/wake_path.cc's rule: "" when path can name a unix datagram socket
// (empty: none), else why not.
func wakePathProblem(path string) string {
	switch {
	case path == "":
		return ""
	case strings.IndexByte(path, 0) >= 0:
		return "wake socket path holds a NUL byte"
	case path[0] != '/':
		return fmt.Sprintf("wake socket path must be absolute: %q", path)
	case len(path) > maxWakePathBytes:
		return fmt.Sprintf("wake socket path is %d bytes; a unix socket path holds at most %d", len(path), maxWakePathBytes)
	}
	return ""
}
