package transports

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseInputRequired(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok      bool
		errPart string
	}{
		{`{"content":[],"resultType":"complete"}`, false, ""},
		{`{"content":[{"type":"text","text":"input_required"}]}`, false, ""},
		{`{"resultType":"input_required","requestState":"x"}`, true, ""},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`, true, ""},
		{`{"resultType":"input_required"}`, true, "neither inputRequests nor requestState"},
		{`{"resultType":"input_required","requestState":7}`, true, "requestState is not a string"},
	} {
		_, ok, err := parseInputRequired(json.RawMessage(tc.in))
		if ok != tc.ok || (tc.errPart == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errPart)) {
			t.Errorf("%s: ok=%v err=%v", tc.in, ok, err)
		}
	}
}

// The retry is the original params plus this round's responses and the
// state exactly as received; a state or responses from an earlier round
// never survive.
func TestRetryParams(t *testing.T) {
	orig := json.RawMessage(`{"name":"t","arguments":{"a":1},"_meta":{"progressToken":"p"}}`)
	got := string(retryParams(orig, json.RawMessage(`{"k":{"action":"accept"}}`), json.RawMessage(`"s\u00e9 \"q\""`)))
	want := `{"_meta":{"progressToken":"p"},"arguments":{"a":1},"inputResponses":{"k":{"action":"accept"}},"name":"t","requestState":"s\u00e9 \"q\""}`
	if got != want {
		t.Errorf("retry params\n got %s\nwant %s", got, want)
	}
	second := retryParams(json.RawMessage(got), nil, nil)
	if strings.Contains(string(second), "inputResponses") || strings.Contains(string(second), "requestState") {
		t.Errorf("a retry without responses or state carries old ones: %s", second)
	}
}

func TestModernCapabilities(t *testing.T) {
	got := string(modernCapabilities(json.RawMessage(`{"roots":{"listChanged":true},"sampling":{}}`)))
	if got != `{"roots":{},"sampling":{}}` {
		t.Errorf("got %s", got)
	}
	if got := string(modernCapabilities(json.RawMessage(`{"sampling":{}}`))); got != `{"sampling":{}}` {
		t.Errorf("got %s", got)
	}
}
