package remote

import (
	"context"
	"encoding/json"
	"fmt"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clientside"
	"github.com/mcprt/mcprt/messages"
)

// The session's end of a server's question (asks.go): its own hook
// (AttachOptions.Client) answers, on a goroutine of its own, with a
// context that ends when the member withdraws the question or the session
// closes.

// serveAsk starts answering one question.
func (s *Session) serveAsk(m *askMsg) {
	if m.Kind == askChanged {
		s.changed(m.Body)
		return
	}
	if m.Kind == askProgress {
		s.progress(m)
		return
	}
	if m.Kind == askElicitComplete {
		var d elicitDone
		if f := s.client.ElicitationComplete; f != nil && json.Unmarshal(m.Body, &d) == nil {
			func() {
				defer asHostPanic() // the receiver's crash (supervise.go)
				f(m.Server, d.ElicitationID)
			}()
		}
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	if s.gone != nil {
		s.mu.Unlock()
		cancel()
		return
	}
	s.askCancels[m.ID] = cancel
	s.asking.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.asking.Done()
		ctx := ctx
		if c := s.callerOf(m.Call); c != nil {
			ctx = mcprt.WithCaller(ctx, c) // the hook may ask whose call it is
		}
		body, err := s.answerAskGuarded(ctx, m)
		s.mu.Lock()
		delete(s.askCancels, m.ID)
		s.mu.Unlock()
		cancel()
		_ = s.link.send(s.session, &answerMsg{ID: m.ID, Body: body, Err: toWireErr(err)})
	}()
}

// withdrawAsk ends the hook answering the question with id.
func (s *Session) withdrawAsk(id uint64) {
	s.mu.Lock()
	cancel := s.askCancels[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// answerAskGuarded runs the session's hook for one question; a hook that
// panics is a crash of this question's goroutine, never of the process:
// the question is answered with an error and the host is told.
func (s *Session) answerAskGuarded(ctx context.Context, m *askMsg) (body json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			text := fmt.Sprintf("this session's %s hook panicked (%s); the question of %q was answered with an error", m.Kind, crashText(r), m.Server)
			s.logger.Warn("remote: a client hook panicked", "what", text)
			s.notifyGuarded(messages.Notice{Level: messages.NoticeWarning, Server: m.Server, Text: text})
			body, err = nil, messages.Errorf(messages.KindInternal, m.Server, "the client's %s hook failed", m.Kind)
		}
	}()
	return s.answerAsk(ctx, m)
}

// notifyGuarded hands a notice to the host; a Notify that panics is only
// logged.
func (s *Session) notifyGuarded(n messages.Notice) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("the host's Notify panicked", "reason", crashText(r))
		}
	}()
	s.notifyHost(n)
}

// answerAsk runs the session's hook for one question.
func (s *Session) answerAsk(ctx context.Context, m *askMsg) (json.RawMessage, error) {
	h := s.client
	missing := func(what string) error {
		return messages.Errorf(messages.KindInvalidArgs, m.Server, "this session offers no %s", what)
	}
	var out any
	var err error
	switch m.Kind {
	case askElicit:
		var q mcprt.ElicitForm
		if err := json.Unmarshal(m.Body, &q); err != nil {
			return nil, err
		}
		if h.Elicit == nil {
			return nil, missing("form elicitation")
		}
		out, err = h.Elicit(ctx, q)
	case askElicitURL:
		var q mcprt.ElicitURL
		if err := json.Unmarshal(m.Body, &q); err != nil {
			return nil, err
		}
		if h.ElicitURL == nil {
			return nil, missing("URL elicitation")
		}
		out, err = h.ElicitURL(ctx, q)
	case askSample:
		var w samplingQ
		if err := json.Unmarshal(m.Body, &w); err != nil {
			return nil, err
		}
		if h.Sample == nil {
			return nil, missing("sampling")
		}
		q := w.Request
		q.Messages = make([]clientside.SamplingMessage, 0, len(w.Messages))
		for _, sm := range w.Messages {
			q.Messages = append(q.Messages, clientside.SamplingMessage{Role: sm.Role, Content: sm.Content, Text: sm.Text})
		}
		out, err = h.Sample(ctx, q)
	case askRoots:
		switch {
		case h.ListRoots != nil:
			out, err = h.ListRoots(ctx, m.Server)
		default:
			roots, ok := s.roots.current(h) // Roots, or what SetRoots set
			if !ok {
				return nil, missing("roots")
			}
			out = roots
		}
	default:
		return nil, messages.Errorf(messages.KindInvalidArgs, m.Server, "unknown question %q", m.Kind)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
