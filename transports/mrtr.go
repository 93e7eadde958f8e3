package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/messages"
)

// Multi round-trip requests (2026-07-28, basic/patterns/mrtr): a server
// that needs the client's input (elicitation, sampling, roots) answers
// tools/call, prompts/get or resources/read with an InputRequiredResult
// (resultType "input_required") carrying inputRequests and/or an opaque
// requestState. The client answers every input request, then retries the
// original request with a new JSON-RPC id, carrying inputResponses (one
// result per key) and requestState exactly as received. The retry is a
// request of its own; it may be answered input_required again.
//
// The input requests are answered by the same handler (the host's hooks)
// as 2025-11-25 server requests, with the same bound on how many wait at
// once per connection. A server request cannot be answered with an error
// inside inputResponses: when one cannot be answered (no hook, malformed
// params, the hook failed, too many at once) the call fails with an error
// naming it, and nothing is retried ("the client does not need to replay
// the initial call").

// mrtrMethods are the client requests a 2026-07-28 server may answer with
// an InputRequiredResult.
var mrtrMethods = map[string]bool{
	string(mcp.MethodToolsCall): true, string(mcp.MethodPromptsGet): true, string(mcp.MethodResourcesRead): true,
}

// inputMethods are the requests an InputRequiredResult may carry.
var inputMethods = []string{messages.MethodElicit, messages.MethodSample, messages.MethodListRoots}

// MaxInputRounds bounds the retries of one call: a server that keeps
// answering input_required past it fails the call.
const MaxInputRounds = 32

var inputRequiredMarker = []byte(`"input_required"`)

// inputRequired is an InputRequiredResult.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"`
}

// parseInputRequired reads result; ok is false for any other result type
// ("complete", absent: earlier revisions).
func parseInputRequired(result json.RawMessage) (ir inputRequired, ok bool, err error) {
	if !bytes.Contains(result, inputRequiredMarker) {
		return ir, false, nil
	}
	if json.Unmarshal(result, &ir) != nil {
		return ir, false, nil // not an object: the caller's checks apply
	}
	if ir.ResultType != "input_required" {
		return ir, false, nil
	}
	state := bytes.TrimSpace(ir.RequestState)
	if len(state) > 0 && string(state) != "null" && state[0] != '"' {
		return ir, true, fmt.Errorf("requestState is not a string")
	}
	if len(ir.InputRequests) == 0 && (len(state) == 0 || string(state) == "null") {
		return ir, true, fmt.Errorf("it carries neither inputRequests nor requestState")
	}
	return ir, true, nil
}

// inputRound looks at a request's result before it is reported: when a
// 2026-07-28 server answered input_required, it answers the input requests
// and retries the request (on a goroutine of its own) and returns true;
// the retry's outcome completes the request. A malformed
// InputRequiredResult, or one past MaxInputRounds, turns res into an error.
func (c *conn) inputRound(op messages.Op, st *opState, res *messages.OpResult) bool {
	ir, ok, err := parseInputRequired(res.Result)
	if !ok {
		return false
	}
	if err != nil {
		res.Result, res.Err = nil, messages.Errorf(messages.KindProtocol, c.server, "the server's input_required result is malformed: %s", err)
		return false
	}
	c.mu.Lock()
	st.rounds++
	rounds, aborted := st.rounds, st.aborted
	st.written = false
	c.mu.Unlock()
	if aborted {
		res.Result, res.Err = nil, messages.Errorf(messages.KindAborted, c.server, "cancelled")
		return false
	}
	if rounds > MaxInputRounds {
		res.Result, res.Err = nil, messages.Errorf(messages.KindProtocol, c.server, "the server asked for input %d times in a row; the call gives up", MaxInputRounds)
		return false
	}
	if st.orig == nil {
		st.orig = op.Params
		if len(st.orig) == 0 {
			st.orig = json.RawMessage(`{}`)
		}
	}
	c.d.spawn(func() {
		defer c.recoverOp(op, st, "input round")
		responses, ierr := c.answerInputs(st.ctx, ir, op.Caller)
		if st.ctx.Err() != nil {
			// Given up or closed while the host was asked: that is the
			// outcome, not whatever the withdrawn question answered.
			ierr = c.stoppedError(st)
		}
		if ierr != nil {
			c.complete(op, st, messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Err: ierr})
			return
		}
		next := op
		next.Params = retryParams(st.orig, responses, ir.RequestState)
		c.resend(next, st, "-r"+strconv.Itoa(rounds))
	})
	return true
}

// resend sends op again as a new request: the same operation under a new
// JSON-RPC id (its own id with suffix).
func (c *conn) resend(next messages.Op, st *opState, suffix string) {
	st.reqID = c.ids.forOp(next.ID) + suffix
	if c.lc != nil {
		c.startLine(next, st)
		return
	}
	c.dispatch(func() {
		defer c.recoverOp(next, st, "request worker")
		c.complete(next, st, c.run(st.ctx, next, st))
	})
}

// MaxReissues bounds how often one request is sent again after its
// response stream broke (2026-07-28 Streamable HTTP).
const MaxReissues = 2

// reissue applies the 2026-07-28 rule for a broken response stream:
// resumption is gone ("a broken response stream loses the in-flight
// request; clients MUST re-issue it as a new request with a new request
// ID"). A request whose stream ended without its response is sent again,
// at most MaxReissues times; true when it was. Only a stream the server
// ended (OpResult.OnlyThis) qualifies: a read error ends the connection.
// Streams (Op.Stream: their end is their owner's business) never are.
func (c *conn) reissue(op messages.Op, st *opState) bool {
	c.mu.Lock()
	ok := !st.aborted && !c.closing && !c.ended && st.reissues < MaxReissues
	if ok {
		st.reissues++
	}
	n := st.reissues
	c.mu.Unlock()
	if !ok || st.ctx.Err() != nil {
		return false
	}
	c.d.logger().Debug("response stream broke; the request is sent again with a new id", "server", c.server, "method", op.Method, "attempt", n)
	c.resend(op, st, "-a"+strconv.Itoa(n))
	return true
}

// stoppedError says why a request waiting on its inputs ended.
func (c *conn) stoppedError(st *opState) *messages.Error {
	c.mu.Lock()
	aborted := st.aborted
	c.mu.Unlock()
	if aborted {
		return messages.Errorf(messages.KindAborted, c.server, "cancelled")
	}
	return messages.Errorf(messages.KindDisconnected, c.server, "connection closed")
}

// retryParams is the original request's params with the input responses
// and the request state (exactly as the server sent it); without them the
// fields are absent.
func retryParams(orig, responses, state json.RawMessage) json.RawMessage {
	fields := map[string]json.RawMessage{}
	_ = json.Unmarshal(orig, &fields) // prepare refused params that are not an object
	delete(fields, "inputResponses")
	delete(fields, "requestState")
	if len(responses) > 0 {
		fields["inputResponses"] = responses
	}
	if s := bytes.TrimSpace(state); len(s) > 0 && string(s) != "null" {
		fields["requestState"] = s
	}
	out, _ := json.Marshal(fields)
	return out
}

// answerInputs answers every input request with the handler, at once, and
// returns the inputResponses object (nil when there were none). Every
// input request carries the call's caller tag.
func (c *conn) answerInputs(ctx context.Context, ir inputRequired, caller any) (json.RawMessage, *messages.Error) {
	if len(ir.InputRequests) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(ir.InputRequests))
	reqs := make(map[string]messages.ServerRequest, len(ir.InputRequests))
	for key, raw := range ir.InputRequests {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, messages.Errorf(messages.KindProtocol, c.server, "the server's input request %q is not a request object", key)
		}
		if !slices.Contains(inputMethods, r.Method) {
			return nil, messages.Errorf(messages.KindProtocol, c.server, "the server's input request %q has method %q, which an input request cannot have", key, r.Method)
		}
		keys = append(keys, key)
		reqs[key] = messages.ServerRequest{Server: c.server, Gen: c.gen, Method: r.Method, Params: r.Params, Caller: caller}
	}
	sort.Strings(keys)
	if c.d.ServerRequests == nil {
		return nil, messages.Errorf(messages.KindProtocol, c.server, "the server asked for input (%s, key %q) the client does not offer", reqs[keys[0]].Method, keys[0])
	}
	if !c.sreq.reserve(len(keys)) {
		return nil, messages.Errorf(messages.KindResourceExhausted, c.server,
			"the server asked for %d inputs while others wait: too many pending requests (at most %d per connection)", len(keys), messages.MaxPendingServerRequests)
	}
	defer c.sreq.release(len(keys))
	results := make([]json.RawMessage, len(keys))
	errs := make([]*messages.RPCError, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Add(1)
		c.d.spawn(func() {
			defer wg.Done()
			defer func() {
				if p := recovered("input request", recover()); p != nil {
					errs[i] = &messages.RPCError{Code: messages.RPCInternal, Message: p.Error()}
				}
			}()
			results[i], errs[i] = c.d.ServerRequests(ctx, reqs[key])
		})
	}
	wg.Wait()
	out := make(map[string]json.RawMessage, len(keys))
	for i, key := range keys {
		if e := errs[i]; e != nil {
			kind := messages.KindProtocol // the server asked what the client does not offer, or malformed
			if e.Code == messages.RPCInternal {
				kind = messages.KindRPC
			}
			return nil, messages.Errorf(kind, c.server, "the server's input request %q (%s) was not answered: %s", key, reqs[key].Method, e.Message)
		}
		if len(results[i]) == 0 {
			results[i] = json.RawMessage(`{}`)
		}
		out[key] = results[i]
	}
	b, _ := json.Marshal(out)
	return b, nil
}
