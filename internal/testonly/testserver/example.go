package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/mcpline"
)

// The example protocol extension's methods (namespace "example").
const (
	MethodExampleList   = "example/list"
	MethodExampleStream = "example/stream"
	MethodExamplePoke   = "example/poke"

	NoteExampleActive      = "notifications/example/active"
	NoteExampleItem        = "notifications/example/item"
	NoteExampleUndeclared  = "notifications/example/undeclared"
	NoteExampleListChanged = "notifications/example/list_changed"
)

// Stream ends example/stream's "end" parameter chooses.
const (
	EndResult = "result" // the final result {"sent": count} (the default)
	EndError  = "error"  // a JSON-RPC error with errorCode, errorMessage, errorData
	EndCancel = "cancel" // the server sends notifications/cancelled for the stream
	EndEOF    = "eof"    // no result: Streamable HTTP ends the POST's response
	EndNever  = "never"  // runs until the client cancels it
)

// Defaults of an "error" end without errorCode or errorMessage.
const (
	DefaultStreamErrorCode    = -32000
	DefaultStreamErrorMessage = "stream failed on purpose"
)

// maxStreamItems bounds count and late.
const maxStreamItems = 100000

// StreamParams are example/stream's params.
type StreamParams struct {
	Count        int             `json:"count"`
	IntervalMs   int             `json:"intervalMs"`
	End          string          `json:"end"`
	ErrorCode    int             `json:"errorCode"`
	ErrorMessage string          `json:"errorMessage"`
	ErrorData    json.RawMessage `json:"errorData"`
	Late         int             `json:"late"`
}

// exampleMethods returns the example namespace's custom methods.
func exampleMethods() mcpline.Methods {
	return mcpline.Methods{
		MethodExampleList:   exampleList,
		MethodExampleStream: exampleStream,
		MethodExamplePoke:   examplePoke,
	}
}

func exampleList(context.Context, *mcpline.Call) (any, error) {
	return map[string]any{"items": []string{"a", "b"}}, nil
}

// examplePoke sends an unsolicited notifications/example/list_changed, then
// answers {}.
func examplePoke(_ context.Context, call *mcpline.Call) (any, error) {
	if err := call.Notify(NoteExampleListChanged, map[string]any{}); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// exampleStream sends notifications/example/active, one
// notifications/example/undeclared, then count notifications/example/item
// {"n": 1..count} intervalMs apart, all with the stream's subscription id;
// then it ends as params.end says, and sends late more items
// {"n": count+1...} after the end. When its context ends first (the client
// cancelled it, or the connection ended) it appends [StreamCancelLine] to
// the file named by [EnvCancelLog] and still sends the late items.
func exampleStream(ctx context.Context, call *mcpline.Call) (any, error) {
	var p StreamParams
	if len(call.Params()) > 0 {
		if err := json.Unmarshal(call.Params(), &p); err != nil {
			return nil, &mcpline.Error{Code: mcp.INVALID_PARAMS, Message: "example/stream params: " + err.Error()}
		}
	}
	if p.End == "" {
		p.End = EndResult
	}
	switch {
	case p.Count < 0 || p.Count > maxStreamItems || p.Late < 0 || p.Late > maxStreamItems || p.IntervalMs < 0:
		return nil, &mcpline.Error{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("count and late must be in [0, %d], intervalMs not negative", maxStreamItems)}
	case p.End != EndResult && p.End != EndError && p.End != EndCancel && p.End != EndEOF && p.End != EndNever:
		return nil, &mcpline.Error{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("unknown end %q", p.End)}
	}

	late := func(from int) {
		for n := from; n < from+p.Late; n++ {
			_ = call.Send(NoteExampleItem, map[string]any{"n": n})
		}
	}
	cancelled := func(next int) (any, error) {
		logStreamCancel(call.ID())
		late(next)
		return nil, ctx.Err()
	}

	if err := call.Send(NoteExampleActive, map[string]any{}); err != nil {
		return nil, err
	}
	if err := call.Send(NoteExampleUndeclared, map[string]any{"note": "not declared by clients"}); err != nil {
		return nil, err
	}
	for n := 1; n <= p.Count; n++ {
		if n > 1 && !clock.Wait(ctx, clock.Real{}, time.Duration(p.IntervalMs)*time.Millisecond) {
			return cancelled(n)
		}
		if ctx.Err() != nil {
			return cancelled(n)
		}
		if err := call.Send(NoteExampleItem, map[string]any{"n": n}); err != nil {
			return nil, err
		}
	}

	var end error
	switch p.End {
	case EndResult:
		end = call.End(map[string]any{"sent": p.Count}, nil)
	case EndError:
		e := &mcpline.Error{Code: p.ErrorCode, Message: p.ErrorMessage}
		if e.Code == 0 {
			e.Code = DefaultStreamErrorCode
		}
		if e.Message == "" {
			e.Message = DefaultStreamErrorMessage
		}
		if len(p.ErrorData) > 0 && !bytes.Equal(p.ErrorData, []byte("null")) {
			e.Data = p.ErrorData
		}
		end = call.End(nil, e)
	case EndCancel:
		end = call.End(nil, mcpline.ErrServerCancel)
	case EndEOF:
		end = call.End(nil, mcpline.ErrNoResult)
	case EndNever:
		<-ctx.Done()
		return cancelled(p.Count + 1)
	}
	if end != nil {
		return nil, end
	}
	late(p.Count + 1)
	return nil, nil
}

// StreamCancelLine is the line example/stream appends to the file named by
// [EnvCancelLog] when its context ends before it ended: "cancelled
// example/stream " and the stream's request id as compact JSON.
func StreamCancelLine(id json.RawMessage) string {
	return "cancelled " + MethodExampleStream + " " + compactJSON(id)
}

func logStreamCancel(id json.RawMessage) {
	appendLine(os.Getenv(EnvCancelLog), StreamCancelLine(id))
}
