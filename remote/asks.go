package remote

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// What servers ask of the client (roots, elicitation, sampling) is asked
// of one session: the member's runtime is started with Server.ClientHooks,
// whose hooks send the question to the session chosen by router.pick and
// wait for its answer (or for the server to withdraw the question, or
// for the session to end, which answers it with an error).

// Asks lists what servers may ask the sessions of a member: each one set
// is advertised to servers as a client capability and answered by a
// session's own hook (AttachOptions.Client); a session without that hook
// answers with an error.
type Asks struct {
	Elicit, ElicitURL, Sample, Roots bool
	// SamplingSupport is what sessions' Sample hooks take beyond text.
	SamplingSupport mcprt.SamplingSupport
}

// The kinds of a question.
const (
	askElicit         = "elicit"         // mcprt.ElicitForm → mcprt.ElicitAnswer
	askElicitURL      = "elicitURL"      // mcprt.ElicitURL → mcprt.ElicitAnswer
	askSample         = "sample"         // samplingQ → mcprt.SamplingResult
	askRoots          = "roots"          // nothing → []mcprt.Root
	askElicitComplete = "elicitComplete" // elicitDone, no answer
)

// samplingQ is a sampling request on the wire (clientside's messages keep
// their content out of JSON).
type samplingQ struct {
	Request  mcprt.SamplingRequest `json:"request"`
	Messages []samplingMsg         `json:"messages"`
}

type samplingMsg struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
	Text    string            `json:"text"`
}

// elicitDone is a URL-mode elicitation's end.
type elicitDone struct {
	ElicitationID string `json:"elicitationId"`
}

// asks are the questions waiting for a session's answer, by id.
type asks struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	next    uint64
	waiting map[uint64]chan *answerMsg
	urls    map[string]*actor.PID // URL elicitation id → the session asked
}

// ClientHooks are the hooks to start the shared runtime with
// (mcprt.Options.Client): every one ServeOptions.Asks names, each asking
// a session.
func (s *Server) ClientHooks() mcprt.ClientHooks {
	a := s.opts.Asks
	var h mcprt.ClientHooks
	if a.Elicit {
		h.Elicit = func(ctx context.Context, q mcprt.ElicitForm) (ans mcprt.ElicitAnswer, err error) {
			err = s.ask(ctx, q.Server, askElicit, q, &ans, nil)
			multiToStrings(q.Form, ans.Content)
			return ans, err
		}
	}
	if a.ElicitURL {
		h.ElicitURL = func(ctx context.Context, q mcprt.ElicitURL) (ans mcprt.ElicitAnswer, err error) {
			return ans, s.ask(ctx, q.Server, askElicitURL, q, &ans, func(pid *actor.PID) {
				s.asks.mu.Lock()
				s.asks.urls[q.ElicitationID] = pid
				s.asks.mu.Unlock()
			})
		}
		h.ElicitationComplete = func(server, id string) {
			s.asks.mu.Lock()
			pid := s.asks.urls[id]
			delete(s.asks.urls, id)
			s.asks.mu.Unlock()
			if pid != nil {
				body, _ := json.Marshal(elicitDone{ElicitationID: id})
				s.n.sys.Root.Send(pid, askOut{msg: &askMsg{Kind: askElicitComplete, Server: server, Body: body}})
			}
		}
	}
	if a.Sample {
		h.SamplingSupport = a.SamplingSupport
		h.Sample = func(ctx context.Context, q mcprt.SamplingRequest) (res mcprt.SamplingResult, err error) {
			w := samplingQ{Request: q}
			for _, m := range q.Messages {
				w.Messages = append(w.Messages, samplingMsg{Role: m.Role, Content: m.Content, Text: m.Text})
			}
			return res, s.ask(ctx, q.Server, askSample, w, &res, nil)
		}
	}
	if a.Roots {
		h.ListRoots = func(ctx context.Context, server string) (roots []mcprt.Root, err error) {
			return roots, s.ask(ctx, server, askRoots, struct{}{}, &roots, nil)
		}
	}
	return h
}

// ask puts one question to the session router.pick chooses for server
// and decodes its answer into out.
func (s *Server) ask(ctx context.Context, server, kind string, q, out any, chosen func(*actor.PID)) error {
	if s.n == nil {
		return messages.Errorf(messages.KindDisconnected, server, "the shared runtime is not serving yet")
	}
	pid := s.router.pick(server)
	if pid == nil {
		return messages.Errorf(messages.KindDisconnected, server, "no session is attached to answer %s", kind)
	}
	if chosen != nil {
		chosen(pid)
	}
	body, err := json.Marshal(q)
	if err != nil {
		return messages.Errorf(messages.KindInternal, server, "encoding the question: %s", err)
	}
	ch := make(chan *answerMsg, 1)
	s.asks.mu.Lock()
	s.asks.next++
	id := s.asks.next
	s.asks.waiting[id] = ch
	s.asks.mu.Unlock()
	s.n.sys.Root.Send(pid, askOut{msg: &askMsg{ID: id, Kind: kind, Server: server, Body: body}})
	select {
	case a := <-ch:
		if a.Err != nil {
			return a.Err.toError()
		}
		if err := json.Unmarshal(a.Body, out); err != nil {
			return messages.Errorf(messages.KindProtocol, server, "the session's answer is malformed: %s", err)
		}
		return nil
	case <-ctx.Done():
		s.asks.mu.Lock()
		delete(s.asks.waiting, id)
		s.asks.mu.Unlock()
		s.n.sys.Root.Send(pid, askOut{cancel: id})
		return ctx.Err()
	}
}

// answered hands a session's answer to the question waiting for it.
func (s *Server) answered(a *answerMsg) {
	s.asks.mu.Lock()
	ch := s.asks.waiting[a.ID]
	delete(s.asks.waiting, a.ID)
	s.asks.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

// askOut is a question (or its withdrawal, cancel) for a session actor
// to pass on.
type askOut struct {
	msg    *askMsg
	cancel uint64
}

// multiToStrings turns a multi-select's answer back into []string (JSON
// gave []any), as a local hook would have answered.
func multiToStrings(form mcprt.Form, content map[string]any) {
	for _, f := range form.Fields {
		list, ok := content[f.Name].([]any)
		if f.Kind != mcprt.FieldMulti || !ok {
			continue
		}
		out := make([]string, 0, len(list))
		for _, v := range list {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		content[f.Name] = out
	}
}
