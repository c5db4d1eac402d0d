package roomservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
)

// Server is the service's HTTP handler:
//
//	GET  /healthz                 200 "ok"
//	POST /rooms/{room_id}/gifts   {"command_id": "...", "user_id": "u1", "gift": "rose", "count": 1}
//
// A gift is one SendGift command: the room's row gets room_seq + 1 and the gifts, and the
// command's events (RoomGiftSent for IM, RoomHeatChanged never sent) go into room_outbox, all in
// one transaction; then the relay is woken. command_id is the idempotency key (a new one is made
// when it is missing): a repeat answers 200 "duplicate" and changes nothing. 201 on commit, 400
// for a bad request or a command the checks refuse, 503 when the database fails.
type Server struct {
	db     *sql.DB
	writer *outboxsql.Writer
	mux    *http.ServeMux
}

// NewServer serves gifts through db and writer.
func NewServer(db *sql.DB, writer *outboxsql.Writer) *Server {
	s := &Server{db: db, writer: writer, mux: http.NewServeMux()}
	s.mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	s.mux.HandleFunc("/rooms/", s.gifts)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// GiftRequest is the body of POST /rooms/{room_id}/gifts.
type GiftRequest struct {
	CommandID string `json:"command_id"`
	UserID    string `json:"user_id"`
	Gift      string `json:"gift"`
	Count     int64  `json:"count"`
}

// GiftResponse is the answer: the command's outcome and, when committed, the room's new
// version and each event's row.
type GiftResponse struct {
	CommandID string                    `json:"command_id"`
	RoomID    string                    `json:"room_id"`
	Status    string                    `json:"status"`
	RoomSeq   int64                     `json:"room_seq,omitempty"`
	Events    []outboxsql.EventDelivery `json:"events,omitempty"`
	Error     string                    `json:"error,omitempty"`
}

func (s *Server) gifts(w http.ResponseWriter, r *http.Request) {
	room, ok := giftsPath(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, GiftResponse{RoomID: room, Error: "use POST"})
		return
	}
	var req GiftRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		reply(w, http.StatusBadRequest, GiftResponse{RoomID: room, Error: "body: " + err.Error()})
		return
	}
	if req.UserID == "" || req.Gift == "" || req.Count < 0 {
		reply(w, http.StatusBadRequest, GiftResponse{RoomID: room, Error: "user_id and gift are required, count >= 0"})
		return
	}
	if req.Count == 0 {
		req.Count = 1
	}
	if req.CommandID == "" {
		req.CommandID = fmt.Sprintf("gift-%s-%d", room, time.Now().UnixNano())
	}
	code, res := s.sendGift(r.Context(), room, req, r.Header.Get("X-Request-Id"))
	reply(w, code, res)
}

// giftsPath is the room of "/rooms/{room_id}/gifts".
func giftsPath(path string) (string, bool) {
	rest := strings.TrimPrefix(path, "/rooms/")
	room := strings.TrimSuffix(rest, "/gifts")
	if room == rest || room == "" || strings.Contains(room, "/") {
		return "", false
	}
	return room, true
}

// sendGift applies the command and writes its events in one transaction; the room's row lock
// makes its commands commit one after the other, in room_seq order (the outbox's room order).
func (s *Server) sendGift(ctx context.Context, room string, req GiftRequest, requestID string) (int, GiftResponse) {
	res := GiftResponse{CommandID: req.CommandID, RoomID: room}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return failed(res, http.StatusServiceUnavailable, err)
	}
	defer func() { _ = tx.Rollback() }() // after Commit: ErrTxDone, nothing to undo
	seq, gifts, err := applyGift(ctx, tx, room, req.Count)
	if err != nil {
		return failed(res, http.StatusServiceUnavailable, err)
	}
	payload, _ := json.Marshal(map[string]interface{}{"user_id": req.UserID, "gift": req.Gift, "count": req.Count})
	heat, _ := json.Marshal(map[string]int64{"heat": gifts})
	cmd := outboxsql.Command{CommandID: req.CommandID, RoomID: room, CommandType: "SendGift",
		RequestID: requestID, RoomSeq: seq, Payload: string(payload)}
	events := []outboxsql.Event{
		{EventID: req.CommandID + "-gift", EventType: "RoomGiftSent", RoomSeq: seq, Payload: string(payload)},
		{EventID: req.CommandID + "-heat", EventType: "RoomHeatChanged", RoomSeq: seq, Payload: string(heat)},
	}
	written, err := s.writer.Write(ctx, tx, cmd, events)
	switch {
	case errors.Is(err, outboxsql.ErrInvalidArgument):
		return failed(res, http.StatusBadRequest, err)
	case err != nil:
		return failed(res, http.StatusServiceUnavailable, err)
	case written.Status == outboxsql.Duplicate:
		res.Status = "duplicate" // rolled back by the deferred Rollback: applied before
		return http.StatusOK, res
	}
	if err := tx.Commit(); err != nil {
		// The answer may have been lost: the same command_id again tells (duplicate: it committed).
		return failed(res, http.StatusServiceUnavailable, err)
	}
	_ = s.writer.Wake() // best effort: without it the relay finds the rows at its next poll
	res.Status, res.RoomSeq, res.Events = "committed", seq, written.Events
	return http.StatusCreated, res
}

// applyGift moves the room to its next version, creating its row on its first gift, and
// returns the new room_seq and gift count. The first statement takes the room's row lock.
func applyGift(ctx context.Context, tx *sql.Tx, room string, count int64) (int64, int64, error) {
	if _, err := tx.ExecContext(ctx, "INSERT INTO room_gift_state (room_id, room_seq, gifts) "+
		"VALUES (?, 0, 0) ON DUPLICATE KEY UPDATE room_id = room_id", room); err != nil {
		return 0, 0, err
	}
	var seq, gifts int64
	if err := tx.QueryRowContext(ctx, "SELECT room_seq, gifts FROM room_gift_state WHERE room_id = ? FOR UPDATE",
		room).Scan(&seq, &gifts); err != nil {
		return 0, 0, err
	}
	seq, gifts = seq+1, gifts+count
	_, err := tx.ExecContext(ctx, "UPDATE room_gift_state SET room_seq = ?, gifts = ? WHERE room_id = ?", seq, gifts, room)
	return seq, gifts, err
}

func failed(res GiftResponse, code int, err error) (int, GiftResponse) {
	res.Status, res.Error = "failed", err.Error()
	return code, res
}

func reply(w http.ResponseWriter, code int, body GiftResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
