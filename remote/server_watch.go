package remote

import (
	"encoding/json"
	"sync"

	mcprt "github.com/mcprt/mcprt"
)

// Pushed changes. The member watches its runtime's status and tool set
// (Runtime.WatchStatus, WatchTools) and tells every session when either
// changed; a session's own WatchStatus and WatchTools (session_watch.go)
// then fetch the status, or signal its host to list the tools again. The
// notice carries no data: what a session sees is always what it asks for,
// so a notice lost with a session's connection costs nothing but a late
// update. Notices leave through the member's pool, as deliveries do.

// changeQ says what changed.
type changeQ struct {
	Status bool `json:"status,omitempty"`
	Tools  bool `json:"tools,omitempty"`
}

// changeWatch is the member's goroutine watching its runtime.
type changeWatch struct {
	mu  sync.Mutex
	end func() // ends the watch and waits for its goroutine; guarded by mu
}

// watchChanges starts telling sessions of the runtime's changes.
func (s *Server) watchChanges(rt *mcprt.Runtime) {
	status, stopStatus := rt.WatchStatus()
	tools, stopTools := rt.WatchTools()
	<-status // the status as it is now: a session asks for that itself
	done := make(chan struct{})
	go func() {
		defer close(done)
		for status != nil || tools != nil {
			select {
			case _, ok := <-status:
				if !ok {
					status = nil
					continue
				}
				s.tellChanged(changeQ{Status: true})
			case _, ok := <-tools:
				if !ok {
					tools = nil
					continue
				}
				s.tellChanged(changeQ{Tools: true})
			}
		}
	}()
	s.watch.mu.Lock()
	s.watch.end = func() {
		stopStatus()
		stopTools()
		<-done
	}
	s.watch.mu.Unlock()
}

// stop ends the watch (once) and waits for its goroutine.
func (w *changeWatch) stop() {
	w.mu.Lock()
	f := w.end
	w.end = nil
	w.mu.Unlock()
	if f != nil {
		f()
	}
}

// tellChanged sends every attached session a change notice.
func (s *Server) tellChanged(c changeQ) {
	body, _ := json.Marshal(c)
	for _, pid := range s.router.all() {
		s.router.send(pid, askOut{msg: &askMsg{Kind: askChanged, Body: body}})
	}
}
