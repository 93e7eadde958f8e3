package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// once makes a reply function idempotent and hands the first value to ch.
func once[R any](ch chan R) func(R) {
	var o sync.Once
	return func(r R) { o.Do(func() { ch <- r }) }
}

// await waits for a reply; if ctx ends first it aborts the operation and
// still waits for the (then prompt) aborted reply, so the operation's lease
// is released before the caller returns. Once Close has finished no reply
// can come any more (a command that reached an actor after it stopped is a
// dead letter), so then it returns KindShutdown.
func await[R any](ctx context.Context, s *System, server string, token messages.Token, ch chan R, aborted func(*messages.Error) R) R {
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
	case <-s.done:
		select {
		case r := <-ch:
			return r
		default:
			return aborted(messages.Errorf(messages.KindShutdown, server, "the runtime is shutting down"))
		}
	}
	if r, ok := ready(ch); ok {
		return r
	}
	s.Post(server, &messages.Abort{Token: token})
	select {
	case r := <-ch:
		return r
	case <-s.done:
		if r, ok := ready(ch); ok {
			return r
		}
		return aborted(messages.Errorf(messages.KindAborted, server, "cancelled by the caller"))
	}
}

// ready returns a reply already in ch. A select picks at random among the
// cases that are ready, so a wait that sees ctx or shutdown end looks at
// its reply channel once more: a reply that arrived meanwhile wins, and
// nothing is posted for an operation that has finished. (The simulator
// replays every interleaving from its seed; a coin toss here broke that.)
func ready[R any](ch chan R) (R, bool) {
	select {
	case r := <-ch:
		return r, true
	default:
		var zero R
		return zero, false
	}
}

// Request sends one JSON-RPC request to server, connecting first as its
// lifecycle allows, and waits for the result.
func (s *System) Request(ctx context.Context, server, method string, params json.RawMessage, dl messages.DeadlineKind, origin messages.Origin) messages.Reply {
	ch := make(chan messages.Reply, 1)
	token := s.NewToken()
	assist := messages.NewAssist()
	s.Post(server, &messages.Request{Token: token, Method: method, Params: params, Deadline: dl, Origin: origin, Reply: once(ch), Assist: assist,
		Caller: messages.CallerOf(ctx)})
	return awaitAssisted(ctx, s, server, token, ch, assist)
}

// ListAll returns every item of a paginated list method.
func (s *System) ListAll(ctx context.Context, server, method, field string, origin messages.Origin) messages.ListReply {
	ch := make(chan messages.ListReply, 1)
	token := s.NewToken()
	s.Post(server, &messages.ListAll{Token: token, Method: method, Field: field, Origin: origin, Reply: once(ch)})
	return await(ctx, s, server, token, ch, func(e *messages.Error) messages.ListReply { return messages.ListReply{Err: e} })
}

// Connect connects server now (fresh: replacing a live connection).
func (s *System) Connect(ctx context.Context, server string, fresh bool) messages.ConnectReply {
	ch := make(chan messages.ConnectReply, 1)
	token := s.NewToken()
	s.Post(server, &messages.Connect{Token: token, Fresh: fresh, Reply: once(ch)})
	return await(ctx, s, server, token, ch, func(e *messages.Error) messages.ConnectReply { return messages.ConnectReply{Err: e} })
}

// Refresh makes server's catalog current (connecting it as its lifecycle
// allows for origin) and waits; force lists again even when it is current.
func (s *System) Refresh(ctx context.Context, server string, origin messages.Origin, force bool) *messages.Error {
	ch := make(chan *messages.Error, 1)
	token := s.NewToken()
	s.Post(server, &Refresh{Token: token, Origin: origin, Force: force, Reply: once(ch)})
	return await(ctx, s, server, token, ch, func(e *messages.Error) *messages.Error { return e })
}

// Status returns every server's status, in configuration order. It never
// connects anything.
func (s *System) Status(ctx context.Context) []messages.ServerStatus {
	out := make([]messages.ServerStatus, len(s.names))
	chans := make([]chan messages.ServerStatus, len(s.names))
	for i, name := range s.names {
		chans[i] = make(chan messages.ServerStatus, 1)
		pid, err := s.pid(name)
		if err != nil {
			chans[i] <- messages.ServerStatus{Name: name, State: messages.StateClosed, ToolCount: -1}
			continue
		}
		s.env.send(pid, &messages.QueryStatus{Reply: once(chans[i])})
	}
	for i, name := range s.names {
		var ok bool
		select {
		case out[i] = <-chans[i]:
			continue
		case <-ctx.Done():
			if out[i], ok = ready(chans[i]); !ok {
				out[i] = messages.ServerStatus{Name: name, ToolCount: -1}
			}
		case <-s.done:
			if out[i], ok = ready(chans[i]); !ok {
				out[i] = messages.ServerStatus{Name: name, State: messages.StateClosed, ToolCount: -1}
			}
		}
	}
	return out
}

// ShutdownTimeout bounds Close.
const ShutdownTimeout = 20 * time.Second

// Close shuts down in order: new calls are refused, in-flight ones fail
// with KindShutdown, every connection closes (child processes reaped), then
// every actor stops. It returns when all of that has happened, or with an
// error when ShutdownTimeout (on the injected clock) passes first.
//
// A second call waits for the first to finish and returns its result.
func (s *System) Close() error {
	if !s.closing.CompareAndSwap(false, true) {
		<-s.done
		return s.closeErr
	}
	close(s.closed)
	timeout := make(chan struct{})
	t := s.env.clock.AfterFunc(ShutdownTimeout, func() { close(timeout) })
	defer t.Stop()
	if s.events != nil {
		// The events companion first: it cancels its subscriptions and
		// clears its batchers, so nothing wakes the host after this.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-timeout:
				cancel()
			case <-ctx.Done():
			}
		}()
		s.events.shutdown(ctx)
		cancel()
	}
	stopped := make(chan struct{})
	var stopOnce sync.Once
	s.env.send(s.env.root, shutdownAll{reply: func() { stopOnce.Do(func() { close(stopped) }) }})
	select {
	case <-stopped:
	case <-timeout:
		s.closeErr = fmt.Errorf("actors: shutdown did not finish within %s", ShutdownTimeout)
		close(s.done)
		return s.closeErr
	}
	s.env.system.Root.Stop(s.env.root)
	select {
	case <-s.rootStopped:
	case <-timeout:
		s.closeErr = fmt.Errorf("actors: the root actor did not stop within %s", ShutdownTimeout)
		close(s.done)
		return s.closeErr
	}
	if s.env.cache != nil {
		s.env.cache.close() // writes what the last listings queued
	}
	close(s.done)
	return nil
}

// Done is closed once Close has finished.
func (s *System) Done() <-chan struct{} { return s.done }
