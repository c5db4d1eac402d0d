package outboxsql

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxEnvelopeBytes is core::kMaxEnvelopeBytes: the relay refuses a longer envelope.
const maxEnvelopeBytes = 64 * 1024

// envelopeFields are an envelope's fields (core::EnvelopeFields).
type envelopeFields struct {
	eventID, eventType, roomID string
	roomSeq                    int64
	commandID, requestID       string
	nodeID                     string
	occurredAtMs               int64
	payload                    string // JSON object text
}

// encodeEnvelope is core::WriteEnvelope: the fields in their fixed order, the payload as dump()
// of its parse, with the hook's limits and messages.
func encodeEnvelope(f *envelopeFields) ([]byte, error) {
	if len(f.payload) > maxEnvelopeBytes {
		return nil, invalid(fmt.Sprintf("envelope payload: %d bytes, more than the limit of %d", len(f.payload), maxEnvelopeBytes))
	}
	if jsonNestingDepth(f.payload, maxPayloadDepth) > maxPayloadDepth {
		return nil, invalid(fmt.Sprintf("envelope payload: nested deeper than %d levels", maxPayloadDepth))
	}
	payload, err := canonicalObject(f.payload)
	if err != nil {
		return nil, invalid("envelope " + f.eventID + ": payload is not a JSON object")
	}
	for _, s := range []struct{ name, value string }{
		{"event_id", f.eventID}, {"event_type", f.eventType}, {"room_id", f.roomID},
		{"command_id", f.commandID}, {"request_id", f.requestID}, {"node_id", f.nodeID},
	} {
		if !utf8.ValidString(s.value) {
			return nil, invalid("envelope: cannot encode: " + s.name + " is not valid UTF-8")
		}
	}
	out := make([]byte, 0, 192+len(payload))
	out = append(out, `{"event_id":`...)
	out = appendJSONString(out, f.eventID)
	out = append(out, `,"event_type":`...)
	out = appendJSONString(out, f.eventType)
	out = append(out, `,"room_id":`...)
	out = appendJSONString(out, f.roomID)
	out = append(out, `,"room_seq":`...)
	out = strconv.AppendInt(out, f.roomSeq, 10)
	out = append(out, `,"command_id":`...)
	out = appendJSONString(out, f.commandID)
	out = append(out, `,"request_id":`...)
	out = appendJSONString(out, f.requestID)
	out = append(out, `,"node_id":`...)
	out = appendJSONString(out, f.nodeID)
	out = append(out, `,"occurred_at_ms":`...)
	out = strconv.AppendInt(out, f.occurredAtMs, 10)
	out = append(out, `,"payload":`...)
	out = append(out, payload...)
	out = append(out, '}')
	if len(out) > maxEnvelopeBytes {
		return nil, invalid(fmt.Sprintf("envelope: %d bytes, more than the limit of %d", len(out), maxEnvelopeBytes))
	}
	return out, nil
}

// widestRandom is the hook's kWidestRandom: the body-size check counts the widest Random a body
// can carry.
const widestRandom = 4294967295

// sendGroupMsgBody is core::WriteSendGroupMsgBody in the single form (one event per message),
// with the widest Random: the body whose size the hook checks at commit.
func sendGroupMsgBody(groupIDPrefix string, f *envelopeFields, envelope []byte, priority Priority) []byte {
	out := make([]byte, 0, len(envelope)+len(envelope)/8+256)
	out = append(out, `{"GroupId":`...)
	out = appendJSONString(out, groupIDPrefix+f.roomID)
	out = append(out, `,"Random":`...)
	out = strconv.AppendUint(out, widestRandom, 10)
	out = append(out, `,"MsgPriority":"`...)
	out = append(out, priority...)
	out = append(out, `","MsgBody":[{"MsgType":"TIMCustomElem","MsgContent":{"Data":`...)
	out = appendJSONString(out, string(envelope))
	out = append(out, `,"Desc":`...)
	out = appendJSONString(out, f.eventType)
	out = append(out, `,"Ext":`...)
	out = appendJSONString(out, f.eventID)
	return append(out, "}}]}"...)
}
