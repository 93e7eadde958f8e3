package mcprt

import (
	"context"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// Issue 16, bad input: malformed params of a server request are answered
// -32602 naming the field that is wrong, before any hook runs.
func TestMalformedElicitParamsNameTheField(t *testing.T) {
	c := newClientSide(nil, ClientHooks{Elicit: func(context.Context, ElicitForm) (ElicitAnswer, error) {
		t.Error("the hook ran for malformed params")
		return ElicitAnswer{}, nil
	}})
	for params, want := range map[string]string{
		`{"message":5,"requestedSchema":{"type":"object","properties":{}}}`: "params.message: ",
		`{"mode":["url"]}`: "params.mode: ",
		`[1]`:              "params: ",
		`{"message":"m"}`:  "params.requestedSchema: ",
	} {
		_, err := c.serve(context.Background(), messages.ServerRequest{Server: "s", Method: "elicitation/create", Params: []byte(params)})
		if err == nil || err.Code != messages.RPCInvalidParams || !strings.HasPrefix(err.Message, want) {
			t.Errorf("%s: answered %+v, want -32602 starting %q", params, err, want)
		}
	}
}
