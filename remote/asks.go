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
	askProgress       = "progress"       // progressQ, no answer
	askChanged        = "changed"        // changeQ, no answer (server_watch.go)
)

// sessionCall is the caller tag (mcprt.WithCaller) of a session's call on
// the member: its session actor and the session's request id. The runtime
// hands it back with a server's question it can tie to the call (one read
// from the call's HTTP response stream, a 2026-07-28 input request) and
// with the call's progress, so those go to exactly that session, and
// name the session's call, whatever other sessions do meanwhile.
type sessionCall struct {
	pid *actor.PID
	id  uint64
}

// progressQ is a call's progress on the wire.
type progressQ struct {
	Token    string  `json:"token"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

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
// a session, and Progress(nil), which sends each session its own calls'
// progress.
func (s *Server) ClientHooks() mcprt.ClientHooks {
	a := s.opts.Asks
	h := mcprt.ClientHooks{Progress: s.Progress(nil)}
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
	pid, call := s.router.pick(server), uint64(0)
	if sc, ok := mcprt.CallerOf(ctx).(sessionCall); ok && s.router.attached(sc.pid) {
		pid, call = sc.pid, sc.id // the question is tied to this session's call
	}
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
	s.n.sys.Root.Send(pid, askOut{msg: &askMsg{ID: id, Kind: kind, Server: server, Body: body, Call: call}})
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

// Progress is the member's progress hook (mcprt.ClientHooks.Progress):
// progress of a session's call goes to that session, whose own Progress
// hook (AttachOptions.Client) gets it; any other progress goes to own
// (nil: dropped). Like deliveries it leaves through the member's pool, so
// a session that stops reading never blocks the server reporting it.
func (s *Server) Progress(own func(mcprt.Progress)) func(mcprt.Progress) {
	return func(p mcprt.Progress) {
		sc, ok := p.Caller.(sessionCall)
		if !ok || s.n == nil || !s.router.attached(sc.pid) {
			if own != nil {
				own(p)
			}
			return
		}
		body, _ := json.Marshal(progressQ{Token: p.Token, Progress: p.Progress, Total: p.Total, Message: p.Message})
		s.router.send(sc.pid, askOut{msg: &askMsg{Kind: askProgress, Server: p.Server, Body: body, Call: sc.id}})
	}
}
