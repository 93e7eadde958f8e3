package eventsrv

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// Defaults of the error objects faults send.
const (
	DefaultErrorCode      = -32603
	DefaultErrorMessage   = "upstream error"
	DefaultTerminateCode  = CodeForbidden
	DefaultTerminateText  = "subscription terminated"
	DefaultRPCErrorCode   = -32000
	DefaultRPCErrorText   = "stream failed on purpose"
	defaultErrorDataField = `{"reason":"upstream_error"}`
)

// apply applies one fault on the loop's goroutine. end says the stream is
// over, with the handler's (res, err).
func (st *stream) apply(f Fault) (end bool, res any, err error) {
	call := st.call
	switch f.Kind {
	case FaultStall:
		st.stalled.Store(true)
		if st.stallTimer != nil {
			st.stallTimer.Stop()
		}
		if f.Ms > 0 {
			st.stallTimer = st.srv.clk.AfterFunc(time.Duration(f.Ms)*time.Millisecond, func() { st.enqueue(Fault{Kind: FaultResume}) })
		}
	case FaultResume:
		st.stalled.Store(false)
	case FaultHeartbeat:
		err = st.heartbeat()
	case FaultGap:
		st.t.mu.Lock()
		head := st.t.log.head
		st.t.mu.Unlock()
		st.pos.Store(head)
		err = st.announceGap(head)
	case FaultDuplicate:
		err = st.duplicate(max(f.Count, 1))
	case FaultError:
		obj, _ := f.errorObject(DefaultErrorCode, DefaultErrorMessage)
		if obj.Data == nil {
			obj.Data = json.RawMessage(defaultErrorDataField)
		}
		err = call.Send(NoteError, errorFrame{Error: obj})
	case FaultTerminate:
		obj, _ := f.errorObject(DefaultTerminateCode, DefaultTerminateText)
		st.muted = true
		err = call.Send(NoteTerminated, errorFrame{Error: obj})
	case FaultEnd:
		res := map[string]any{}
		if rt := resultType(call.Params()); rt != "" {
			res["resultType"] = rt
		}
		return true, res, nil
	case FaultRPCError:
		return true, nil, st.rpcError(f)
	case FaultCancel:
		return true, nil, mcpline.ErrServerCancel
	case FaultDrop:
		return true, nil, mcpline.ErrNoResult
	case FaultDisconnect:
		call.Disconnect()
		return true, nil, mcpline.ErrNoResult
	case FaultMalformed:
		err = st.malformed(f.Frame)
	case FaultOversized:
		size := f.Bytes
		if size == 0 {
			size = DefaultOversized
		}
		err = call.Send(NoteEvent, eventFrame{EventID: "oversized_" + strconv.Itoa(size), Name: st.t.typ.Name,
			Timestamp: st.srv.clk.Now().UTC().Format(time.RFC3339Nano), Data: mustJSON(strings.Repeat("x", size)),
			Cursor: st.srv.cursorAt(st.t, st.pos.Load())})
	case FaultListChanged:
		err = call.Notify(NoteListChanged, map[string]any{})
	}
	if err != nil {
		return true, nil, err
	}
	return false, nil, nil
}

// duplicate sends the last n retained occurrences up to the stream's
// position that match its arguments, again.
func (st *stream) duplicate(n int) error {
	pos := st.pos.Load()
	st.t.mu.Lock()
	var again []Entry
	for _, e := range st.t.log.after(0, len(st.t.log.entries)) {
		if e.Seq <= pos && st.match(e.Data) {
			again = append(again, e)
		}
	}
	st.t.mu.Unlock()
	again = again[max(0, len(again)-n):]
	for _, e := range again {
		if err := st.send(e); err != nil {
			return err
		}
	}
	return nil
}

// rpcError returns how an rpc_error fault ends the stream: an *mcpline.Error
// for an integer code, or else the response written raw (with the code as
// given, or none for frame "no_code") and no result.
func (st *stream) rpcError(f Fault) error {
	obj, ok := f.errorObject(DefaultRPCErrorCode, DefaultRPCErrorText)
	if ok && f.Frame != "no_code" {
		e := &mcpline.Error{Code: obj.Code, Message: obj.Message}
		if obj.Data != nil {
			e.Data = obj.Data
		}
		return e
	}
	body := map[string]any{"message": obj.Message}
	if f.Frame != "no_code" {
		body["code"] = f.Code
	}
	if obj.Data != nil {
		body["data"] = obj.Data
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": st.call.ID(), "error": body})
	if err := st.call.SendRaw(msg); err != nil {
		return err
	}
	return mcpline.ErrNoResult
}

// malformed sends one invalid notifications/events/event (see
// MalformedFrames); its eventId is new, so a client that took it would show.
func (st *stream) malformed(kind string) error {
	frame := map[string]any{
		"eventId":   "malformed_" + kind,
		"name":      st.t.typ.Name,
		"timestamp": st.srv.clk.Now().UTC().Format(time.RFC3339Nano),
		"data":      map[string]any{"malformed": kind},
		"cursor":    st.srv.cursorAt(st.t, st.pos.Load()),
	}
	switch kind {
	case "json":
		return st.call.SendRaw([]byte(`{"jsonrpc":"2.0","method":"` + NoteEvent + `","params":{"eventId":`))
	case "event_id_number":
		frame["eventId"] = 42
	case "event_id_long":
		frame["eventId"] = strings.Repeat("e", 1025)
	case "wrong_name":
		frame["name"] = st.t.typ.Name + ".other"
	case "no_data":
		delete(frame, "data")
	case "timestamp_long":
		frame["timestamp"] = strings.Repeat("t", 81)
	case "cursor_number":
		frame["cursor"] = 7
	case "no_subscription":
		return st.call.Notify(NoteEvent, frame)
	case "wrong_subscription":
		frame["_meta"] = map[string]any{mcpline.SubscriptionIDKey: "eventsrv-not-this-stream"}
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": NoteEvent, "params": frame})
		return st.call.SendRaw(msg)
	}
	return st.call.Send(NoteEvent, frame)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // strings always encode
	return b
}
