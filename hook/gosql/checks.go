package outboxsql

// The hook's checks at commit (hook/src/commit_checks.cc), with its messages: a command whose
// rows could never be stored whole or delivered is refused before anything is written.

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	maxIDChars       = 128 // command_id, room_id, request_id, event_id (schema/001)
	maxTypeChars     = 64  // command_type, event_type
	maxGroupIDBytes  = 48  // Tencent's limit for a custom GroupId
	imAssignedPrefix = "@TGS#"
	// The payload sits inside the envelope object: 64 levels (kMaxJsonDepth) with it.
	maxPayloadDepth = 63
)

// utf8Chars is the C++ check's count of UTF-8 characters (lead byte and continuation bytes
// only, as the hook counts them), or -1 when text is not UTF-8 by that rule.
func utf8Chars(text string) int {
	chars := 0
	for i := 0; i < len(text); chars++ {
		lead := text[i]
		n := 0
		switch {
		case lead < 0x80:
			n = 1
		case lead>>5 == 0x6:
			n = 2
		case lead>>4 == 0xE:
			n = 3
		case lead>>3 == 0x1E:
			n = 4
		}
		if n == 0 || lead == 0xC0 || lead == 0xC1 || lead > 0xF4 || i+n > len(text) {
			return -1
		}
		for k := 1; k < n; k++ {
			if text[i+k]&0xC0 != 0x80 {
				return -1
			}
		}
		i += n
	}
	return chars
}

// printable is text with bytes outside printable ASCII written as \xNN, cut to 64 bytes: safe
// in an error.
func printable(text string) string {
	const hex = "0123456789abcdef"
	if len(text) > 64 {
		text = text[:64]
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x20 && c <= 0x7e {
			b.WriteByte(c)
		} else {
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
		}
	}
	return b.String()
}

func checkText(owner func() string, field, value string, maxChars int, required bool) error {
	if required && value == "" {
		return invalid(owner() + ": " + field + " is empty")
	}
	chars := utf8Chars(value)
	if chars < 0 {
		return invalid(owner() + ": " + field + " is not valid UTF-8")
	}
	if chars > maxChars {
		return invalid(fmt.Sprintf("%s: %s has %d characters, over the column's %d", owner(), field, chars, maxChars))
	}
	return nil
}

func checkCommandFields(c *Command) error {
	owner := func() string { return "command " + printable(c.CommandID) }
	for _, f := range []struct {
		name, value string
		max         int
		required    bool
	}{
		{"command_id", c.CommandID, maxIDChars, true},
		{"room_id", c.RoomID, maxIDChars, true},
		{"command_type", c.CommandType, maxTypeChars, true},
		{"request_id", c.RequestID, maxIDChars, false},
	} {
		if err := checkText(owner, f.name, f.value, f.max, f.required); err != nil {
			return err
		}
	}
	return nil
}

func checkEventFields(c *Command, e *Event, index int) error {
	if e.EventID == "" {
		return invalid("command " + printable(c.CommandID) + ": event " + strconv.Itoa(index) + " has an empty event_id")
	}
	owner := func() string { return "event " + printable(e.EventID) }
	if err := checkText(owner, "event_id", e.EventID, maxIDChars, true); err != nil {
		return err
	}
	if err := checkText(owner, "event_type", e.EventType, maxTypeChars, true); err != nil {
		return err
	}
	if jsonNestingDepth(payloadOf(e.Payload), maxPayloadDepth) > maxPayloadDepth {
		return invalid(fmt.Sprintf("%s: payload is nested deeper than %d levels", owner(), maxPayloadDepth))
	}
	return nil
}

// groupIDProblem is "" when prefix + roomID is a GroupId Tencent accepts: printable ASCII
// (0x20-0x7e), at most 48 bytes, not starting with "@TGS#"; else why not.
func groupIDProblem(prefix, roomID string) string {
	id := prefix + roomID
	if len(id) > maxGroupIDBytes {
		return fmt.Sprintf("is %d bytes, over IM's %d", len(id), maxGroupIDBytes)
	}
	if strings.HasPrefix(id, imAssignedPrefix) {
		return "starts with " + imAssignedPrefix + ", which IM reserves"
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return "has a byte outside printable ASCII (0x20-0x7e)"
		}
	}
	return ""
}

// checkCommand is the hook's CheckCommand: the command's fields, each event's, then the
// GroupId when at least one event is sent to IM.
func checkCommand(o *Options, c *Command, events []Event) error {
	if err := checkCommandFields(c); err != nil {
		return err
	}
	sent := false
	for i := range events {
		if err := checkEventFields(c, &events[i], i); err != nil {
			return err
		}
		sent = sent || o.sends(events[i].EventType)
	}
	if sent {
		if problem := groupIDProblem(o.GroupIDPrefix, c.RoomID); problem != "" {
			return invalid("command " + printable(c.CommandID) + ": GroupId \"" +
				printable(o.GroupIDPrefix+c.RoomID) + "\" (group_id_prefix + room_id) " + problem)
		}
	}
	return nil
}
