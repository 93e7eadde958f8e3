package mcpline

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestNotificationStamp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params any
		sub    string
		want   string
	}{
		{"nil params", nil, `"s-1"`, `{"jsonrpc":"2.0","method":"m","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"s-1"}}}`},
		{"keeps fields and other meta", json.RawMessage(`{"n":1,"_meta":{"k":true}}`), `7`, `{"jsonrpc":"2.0","method":"m","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7,"k":true},"n":1}}`},
		{"replaces a stale id", map[string]any{"_meta": map[string]any{SubscriptionIDKey: "old"}}, `"new"`, `{"jsonrpc":"2.0","method":"m","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"new"}}}`},
		{"unstamped", map[string]any{"a": 1}, ``, `{"jsonrpc":"2.0","method":"m","params":{"a":1}}`},
		{"unstamped without params", nil, ``, `{"jsonrpc":"2.0","method":"m"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := notification("m", tc.params, json.RawMessage(tc.sub))
			if err != nil || string(b) != tc.want {
				t.Fatalf("got %s, %v\nwant %s", b, err, tc.want)
			}
		})
	}
	for _, bad := range []any{[]int{1}, "x", json.RawMessage(`{"_meta":[1]}`)} {
		if b, err := notification("m", bad, json.RawMessage(`1`)); err == nil {
			t.Errorf("params %v: got %s, want an error", bad, b)
		}
	}
}

func TestEndMessage(t *testing.T) {
	id := json.RawMessage(`"r-1"`)
	for _, tc := range []struct {
		name   string
		result any
		err    error
		want   string
	}{
		{"result", map[string]int{"n": 2}, nil, `{"jsonrpc":"2.0","id":"r-1","result":{"n":2}}`},
		{"nil result", nil, nil, `{"jsonrpc":"2.0","id":"r-1","result":{}}`},
		{"error with data", nil, &Error{Code: -32011, Message: "gone", Data: map[string]string{"kind": "x"}}, `{"jsonrpc":"2.0","id":"r-1","error":{"code":-32011,"message":"gone","data":{"kind":"x"}}}`},
		{"wrapped error without data", nil, errors.Join(errors.New("ctx"), &Error{Code: 5, Message: "five"}), `{"jsonrpc":"2.0","id":"r-1","error":{"code":5,"message":"five"}}`},
		{"server cancel", nil, ErrServerCancel, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"the server cancelled the request","requestId":"r-1"}}`},
		{"no result", "ignored", ErrNoResult, ``},
		{"plain error", nil, errors.New("boom"), `{"jsonrpc":"2.0","id":"r-1","error":{"code":-32603,"message":"boom"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := endMessage(id, tc.result, tc.err)
			if err != nil || string(b) != tc.want {
				t.Fatalf("got %s, %v\nwant %s", b, err, tc.want)
			}
		})
	}
}
