package eventstream

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	long := func(n int, r string) string { return strings.Repeat(r, n) }
	ev := func(fields string) string { return `{` + fields + `}` }
	const ok = `"eventId":"e1","name":"n","timestamp":"2026-01-01T00:00:00Z"`
	tests := []struct {
		name, method, params string
		kind                 FrameKind
		want                 string // a check on the decoded frame, see below
	}{
		{"event", MethodEvent, ev(ok + `,"cursor":"c","data":{"a":1},"_meta":{"k":1},"extra":2`), FrameEvent, `e1 n c {"a":1}`},
		{"event data null is present", MethodEvent, ev(ok + `,"data":null`), FrameEvent, "e1 n null null"},
		{"event numeric cursor is null", MethodEvent, ev(ok + `,"cursor":7,"data":1`), FrameEvent, "e1 n null 1"},
		{"event without data", MethodEvent, ev(ok), FrameInvalid, "event without data"},
		{"event numeric id", MethodEvent, ev(`"eventId":1,"name":"n","timestamp":"t","data":1`), FrameInvalid, "malformed event"},
		{"event without id", MethodEvent, ev(`"name":"n","timestamp":"t","data":1`), FrameInvalid, "without a string eventId"},
		{"event id 1024 characters", MethodEvent, ev(`"eventId":"` + long(1024, "é") + `","name":"n","timestamp":"t","data":1`), FrameEvent, ""},
		{"event id 1025 characters", MethodEvent, ev(`"eventId":"` + long(1025, "x") + `","name":"n","timestamp":"t","data":1`), FrameInvalid, "eventId longer"},
		{"event name 257 characters", MethodEvent, ev(`"eventId":"e","name":"` + long(257, "x") + `","timestamp":"t","data":1`), FrameInvalid, "name longer"},
		{"event without name", MethodEvent, ev(`"eventId":"e","timestamp":"t","data":1`), FrameInvalid, "without a string name"},
		{"event timestamp 80", MethodEvent, ev(`"eventId":"e","name":"n","timestamp":"` + long(80, "1") + `","data":1`), FrameEvent, ""},
		{"event timestamp 81", MethodEvent, ev(`"eventId":"e","name":"n","timestamp":"` + long(81, "1") + `","data":1`), FrameInvalid, "timestamp longer"},
		{"event timestamp number", MethodEvent, ev(`"eventId":"e","name":"n","timestamp":5,"data":1`), FrameInvalid, "malformed event"},
		{"event without timestamp", MethodEvent, ev(`"eventId":"e","name":"n","data":1`), FrameInvalid, "without a string timestamp"},
		{"params an array", MethodEvent, `[1]`, FrameInvalid, "not an object"},
		{"params null", MethodHeartbeat, `null`, FrameInvalid, "not an object"},
		{"params malformed", MethodHeartbeat, `{"cursor":`, FrameInvalid, "malformed params"},
		{"active", MethodActive, `{"cursor":"c","truncated":true}`, FrameActive, "c true"},
		{"active truncated not true", MethodActive, `{"cursor":"c","truncated":"yes"}`, FrameActive, "c false"},
		{"active null cursor", MethodActive, `{"cursor":null}`, FrameActive, "null false"},
		{"heartbeat object cursor", MethodHeartbeat, `{"cursor":{"x":1}}`, FrameHeartbeat, "null false"},
		{"heartbeat", MethodHeartbeat, ` {"cursor":"q"}`, FrameHeartbeat, "q false"},
		{"error", MethodError, `{"error":{"code":-32603,"message":"m","data":{"reason":"upstream_error"}}}`, FrameError, "m"},
		{"error message not a string", MethodError, `{"error":{"message":5}}`, FrameError, ""},
		{"error not an object", MethodError, `{"error":"boom"}`, FrameError, ""},
		{"terminated", MethodTerminated, `{"error":{"code":-32012,"message":"Forbidden"}}`, FrameTerminated, "Forbidden"},
		{"unknown method", "notifications/events/list_changed", `{}`, FrameInvalid, "unknown method"},
	}
	for _, tt := range tests {
		f := Decode(tt.method, json.RawMessage(tt.params))
		if f.Kind != tt.kind {
			t.Errorf("%s: kind %s (%s), want %s", tt.name, f.Kind, f.Invalid, tt.kind)
			continue
		}
		var got string
		switch f.Kind {
		case FrameInvalid:
			if !strings.Contains(f.Invalid, tt.want) {
				t.Errorf("%s: reason %q, want it to contain %q", tt.name, f.Invalid, tt.want)
			}
			continue
		case FrameEvent:
			if tt.want == "" {
				continue
			}
			got = strings.Join([]string{f.Event.EventID, f.Event.Name, f.Event.Cursor.String(), string(f.Event.Data)}, " ")
		case FrameActive, FrameHeartbeat:
			got = f.Cursor.String() + " " + map[bool]string{true: "true", false: "false"}[f.Truncated]
		default:
			got = f.Message
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// FuzzDecode checks that Decode never panics and that what it accepts is
// within the frame limits and re-encodes.
func FuzzDecode(f *testing.F) {
	seeds := []struct{ method, params string }{
		{MethodEvent, `{"eventId":"e1","name":"n","timestamp":"t","cursor":"c","data":{"a":[1,2]}}`},
		{MethodEvent, `{"eventId":"é","name":"n","timestamp":"t","data":null}`},
		{MethodEvent, `{"eventId":1}`},
		{MethodActive, `{"cursor":"c","truncated":true}`},
		{MethodHeartbeat, `{"cursor":null}`},
		{MethodError, `{"error":{"code":1,"message":"m"}}`},
		{MethodTerminated, `{"error":"x"}`},
		{MethodEvent, `[]`},
		{MethodHeartbeat, "{\"cursor\":\"a\\\"b\\u00e9\xff\"}"},
	}
	for _, s := range seeds {
		f.Add(s.method, []byte(s.params))
	}
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		fr := Decode(method, params)
		var ref struct {
			Cursor any `json:"cursor"`
		}
		if fr.Kind == FrameActive || fr.Kind == FrameHeartbeat || fr.Kind == FrameEvent {
			if err := json.Unmarshal(params, &ref); err != nil {
				t.Fatalf("accepted params encoding/json rejects: %v", err)
			}
			want, isString := ref.Cursor.(string)
			if got, ok := fr.Cursor.Value(); ok != isString || got != want {
				t.Fatalf("cursor %q %v, encoding/json reads %#v", got, ok, ref.Cursor)
			}
		}
		switch fr.Kind {
		case FrameInvalid:
			if fr.Invalid == "" {
				t.Fatal("invalid frame without a reason")
			}
		case FrameEvent:
			e := fr.Event
			if utf8.RuneCountInString(e.EventID) > MaxEventIDChars || utf8.RuneCountInString(e.Name) > MaxEventNameChars ||
				utf8.RuneCountInString(e.Timestamp) > MaxTimestampChars {
				t.Fatalf("limits exceeded: %+v", e)
			}
			if e.Data == nil || !json.Valid(e.Data) {
				t.Fatalf("data %q", e.Data)
			}
			if _, err := PrepareEvent(&EventItem{SubscriptionID: "s", Event: e}); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if method != MethodEvent {
				t.Fatalf("event from %q", method)
			}
		}
	})
}
