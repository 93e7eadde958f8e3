package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	mcprt "github.com/mcprt/mcprt"
)

// hostAsker puts a server's questions (elicitation in form and URL mode,
// sampling) to a sidecar's host when `runtime session --ask-host` is
// given (docs/sidecar.md, "Questions for the host"): each goes out as an
// ask line with an id of the session's own ("q1", "q2", ...), the host
// answers with an answer line naming it, and a question the server or the
// call gave up on first is withdrawn with a withdraw line. Hooks wait on
// the host; the runtime keeps the call's deadline still meanwhile.
type hostAsker struct {
	out *sessionOut

	mu      sync.Mutex
	next    uint64
	waiting map[string]chan hostAnswer // guarded by mu
}

// hostAnswer is an answer line's result or error.
type hostAnswer struct {
	result json.RawMessage
	err    string
}

func newHostAsker(out *sessionOut) *hostAsker {
	return &hostAsker{out: out, waiting: map[string]chan hostAnswer{}}
}

// ask sends one question and waits for its answer or for ctx.
func (a *hostAsker) ask(ctx context.Context, q map[string]any) (json.RawMessage, error) {
	a.mu.Lock()
	a.next++
	id := "q" + strconv.FormatUint(a.next, 10)
	ch := make(chan hostAnswer, 1)
	a.waiting[id] = ch
	a.mu.Unlock()
	q["id"] = id
	a.out.send(map[string]any{"ask": q})
	select {
	case ans := <-ch:
		if ans.err != "" {
			return nil, errors.New("the host: " + ans.err)
		}
		return ans.result, nil
	case <-ctx.Done():
		a.mu.Lock()
		_, still := a.waiting[id]
		delete(a.waiting, id)
		a.mu.Unlock()
		if still {
			a.out.send(map[string]any{"withdraw": id})
		}
		return nil, ctx.Err()
	}
}

// answer hands an answer line to its question; false when no question
// with that id waits.
func (a *hostAsker) answer(id string, result json.RawMessage, errText string) bool {
	a.mu.Lock()
	ch, ok := a.waiting[id]
	delete(a.waiting, id)
	a.mu.Unlock()
	if ok {
		ch <- hostAnswer{result: result, err: errText}
	}
	return ok
}

// hooks are the client hooks that ask the host.
func (a *hostAsker) hooks(h *mcprt.ClientHooks) {
	h.Elicit = func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
		fields := make([]map[string]any, 0, len(q.Form.Fields))
		for _, f := range q.Form.Fields {
			fd := map[string]any{"name": f.Name, "kind": string(f.Kind), "required": f.Required}
			for k, v := range map[string]string{"title": f.Title, "description": f.Description, "format": f.Format} {
				if v != "" {
					fd[k] = v
				}
			}
			if len(f.Options) > 0 {
				opts := make([]map[string]string, 0, len(f.Options))
				for _, o := range f.Options {
					opts = append(opts, map[string]string{"value": o.Value, "title": o.Title})
				}
				fd["options"] = opts
			}
			if f.Default != nil {
				fd["default"] = f.Default
			}
			fields = append(fields, fd)
		}
		raw, err := a.ask(ctx, map[string]any{"kind": "elicitation", "server": q.Server, "message": q.Message, "fields": fields})
		if err != nil {
			return mcprt.ElicitAnswer{}, err
		}
		return elicitAnswerOf(raw)
	}
	h.ElicitURL = func(ctx context.Context, q mcprt.ElicitURL) (mcprt.ElicitAnswer, error) {
		raw, err := a.ask(ctx, map[string]any{"kind": "url", "server": q.Server, "message": q.Message, "url": q.URL, "host": q.Host})
		if err != nil {
			return mcprt.ElicitAnswer{}, err
		}
		return elicitAnswerOf(raw)
	}
	h.Sample = func(ctx context.Context, q mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
		msgs := make([]map[string]string, 0, len(q.Messages))
		for _, m := range q.Messages {
			msgs = append(msgs, map[string]string{"role": m.Role, "text": m.Text})
		}
		ask := map[string]any{"kind": "sampling", "server": q.Server, "messages": msgs, "maxTokens": q.MaxTokens}
		if q.SystemPrompt != "" {
			ask["systemPrompt"] = q.SystemPrompt
		}
		raw, err := a.ask(ctx, ask)
		if err != nil {
			return mcprt.SamplingResult{}, err
		}
		var r struct {
			Text       *string `json:"text"`
			Model      string  `json:"model"`
			StopReason string  `json:"stopReason"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Text == nil {
			return mcprt.SamplingResult{}, errors.New(`the host's sampling answer needs {"text": ..., "model": ...}`)
		}
		return mcprt.SamplingResult{Text: *r.Text, Model: r.Model, StopReason: r.StopReason}, nil
	}
}

// elicitAnswerOf reads an elicitation answer: {"action", "content"}.
func elicitAnswerOf(raw json.RawMessage) (mcprt.ElicitAnswer, error) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return mcprt.ElicitAnswer{}, fmt.Errorf("the host's elicitation answer is not {\"action\", \"content\"}: %w", err)
	}
	switch a := mcprt.ElicitAction(r.Action); a {
	case mcprt.ElicitAccept, mcprt.ElicitDecline, mcprt.ElicitCancel:
		return mcprt.ElicitAnswer{Action: a, Content: r.Content}, nil
	}
	return mcprt.ElicitAnswer{}, fmt.Errorf("the host's elicitation answer has action %q (accept, decline or cancel)", r.Action)
}

// hello is the session's first line: the protocol, the tools, and (with
// --ask-host) the questions the host will be asked.
func (s *session) hello() {
	h := map[string]any{"protocol": sessionProtocol, "version": sessionVersion, "runtime": mcprt.Version, "tools": toolDefs(s.rt.Tools())}
	if s.asker != nil {
		h["asks"] = []string{"elicitation", "url", "sampling"}
	}
	s.out.send(map[string]any{"hello": h})
}

// handleAnswer takes an answer line: {"answer": QID, "result": ...} or
// {"answer": QID, "error": "..."}.
func (s *session) handleAnswer(req sessionRequest) {
	switch {
	case s.asker == nil:
		s.out.send(protocolError(nil, "invalid_request", "an answer line needs runtime session --ask-host (nothing was asked)"))
	case len(req.Result) == 0 && req.Error == "":
		s.out.send(protocolError(nil, "invalid_request", "an answer line needs \"result\" or \"error\""))
	case !s.asker.answer(*req.Answer, req.Result, req.Error):
		s.out.send(protocolError(nil, "unknown_id", "no question "+quote(*req.Answer)+" waits for an answer (answered, or withdrawn)"))
	}
}
