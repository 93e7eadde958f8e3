package remote

import (
	"context"
	"encoding/json"
	"errors"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// The protocol-extension operations of a session (protocol_member.go says
// what is whose). Each names a namespace, a configured server, or the
// session's own protocol sessions and streams by the ids it chose; none
// carries a command or a URL: Connect goes through the runtime's
// configuration, which refuses a server it does not name.

// executeProtocol runs a protocol operation; ok is false for any other.
func (s *Server) executeProtocol(ctx context.Context, m *requestMsg, fromMember bool) (result json.RawMessage, ok bool, err error) {
	switch m.Op {
	case opProtoRegister, opProtoDispose, opProtoConnect, opProtoRequest, opProtoOpen, opProtoWatch, opProtoCancel, opProtoClose:
	default:
		return nil, false, nil
	}
	sp, err := s.protoSession(ctx, fromMember)
	if err != nil {
		return nil, true, err
	}
	if m.Op == opProtoDispose {
		s.protoDispose(sp, m.Name)
		return json.RawMessage(`{}`), true, nil
	}
	if m.Op == opProtoRegister {
		var def mcprt.Definition
		if err := json.Unmarshal(m.Args, &def); err != nil {
			return nil, true, protoErr("", "protocol definition: %s", err)
		}
		if err := s.protoRegister(sp, def); err != nil {
			return nil, true, err
		}
		return json.RawMessage(`{}`), true, nil
	}
	if m.Op == opProtoConnect {
		var a protoConnectArgs
		if err := json.Unmarshal(m.Args, &a); err != nil {
			return nil, true, protoErr("", "connect arguments: %s", err)
		}
		info, err := s.protoConnect(ctx, sp, a)
		if err != nil {
			return nil, true, err
		}
		b, err := json.Marshal(info)
		return b, true, err
	}
	if m.Op == opProtoRequest {
		var a protoRequestArgs
		if err := json.Unmarshal(m.Args, &a); err != nil {
			return nil, true, protoErr("", "request arguments: %s", err)
		}
		c, err := s.protoConnOf(sp, a.Conn)
		if err != nil {
			return nil, true, err
		}
		b, err := c.Request(ctx, a.Method, a.Params)
		if err != nil {
			return nil, true, err
		}
		if len(b) == 0 {
			b = json.RawMessage(`null`)
		}
		return b, true, nil
	}
	var a protoOpenArgs
	if err := json.Unmarshal(m.Args, &a); err != nil {
		return nil, true, protoErr("", "%s arguments: %s", m.Op, err)
	}
	switch m.Op {
	case opProtoOpen, opProtoWatch:
		err = s.protoOpen(sp, m.Op == opProtoWatch, a)
	case opProtoCancel:
		s.protos.mu.Lock()
		st, ok := sp.strs[a.Stream]
		if ok && st == nil {
			sp.early[a.Stream] = true // opening: cancelled once open
		}
		s.protos.mu.Unlock()
		if st != nil {
			st.Cancel()
		}
	case opProtoClose:
		s.protos.mu.Lock()
		c, ok := sp.conns[a.Conn]
		if ok && c == nil {
			sp.early[a.Conn] = true // connecting: closed once connected
		}
		s.protos.mu.Unlock()
		if c != nil {
			c.c.Close()
		}
	}
	if err != nil {
		return nil, true, err
	}
	return json.RawMessage(`{}`), true, nil
}

// protoRegister makes the session an owner of def's namespace.
func (s *Server) protoRegister(sp *sessionProtos, def mcprt.Definition) error {
	mp := &s.protos
	mp.mu.Lock()
	defer mp.mu.Unlock()
	ns := def.Namespace
	if sp.ns[ns] {
		return protoErr("", "namespace %q is already registered by this session", ns)
	}
	if sh := mp.shared[ns]; sh != nil {
		if !sameDefinition(sh.def, def) {
			return protoErr("", "namespace %q is registered on the shared runtime by another session with a different definition", ns)
		}
		sh.owners[sp.sid] = true
		sp.ns[ns] = true
		return nil
	}
	p, err := s.rt.RegisterProtocol(def) // no I/O: the runtime's registry
	if errors.Is(err, extension.ErrInvalidDefinition) {
		return protoErr("", "%s", err) // the session's side wraps ErrInvalidDefinition again
	}
	if err != nil {
		return err
	}
	mp.shared[ns] = &sharedProto{p: p, def: def, owners: map[string]bool{sp.sid: true}}
	sp.ns[ns] = true
	return nil
}

// protoDispose ends the session's registration of ns: its protocol
// sessions of ns are closed, and the runtime's registration disposed when
// no other session shares it.
func (s *Server) protoDispose(sp *sessionProtos, ns string) {
	mp := &s.protos
	mp.mu.Lock()
	if !sp.ns[ns] {
		mp.mu.Unlock()
		return
	}
	delete(sp.ns, ns)
	var conns []protoConn
	for _, c := range sp.conns {
		if c != nil && c.ns == ns {
			conns = append(conns, c.c)
		}
	}
	var disposed []*sharedProto
	if sh := mp.dropLocked(ns, sp.sid); sh != nil {
		disposed = append(disposed, sh)
	}
	mp.mu.Unlock()
	s.closeNow(conns, nil, disposed) // the namespace is free once Dispose returns
}

// protoConnect opens the session's protocol session a.Conn.
func (s *Server) protoConnect(ctx context.Context, sp *sessionProtos, a protoConnectArgs) (messages.ServerInfo, error) {
	mp := &s.protos
	mp.mu.Lock()
	sh := mp.shared[a.Namespace]
	switch {
	case !sp.ns[a.Namespace] || sh == nil:
		mp.mu.Unlock()
		return messages.ServerInfo{}, protoErr(a.Server, "protocol %q is not registered by this session", a.Namespace)
	case a.Conn == 0:
		mp.mu.Unlock()
		return messages.ServerInfo{}, protoErr(a.Server, "a protocol session needs an id")
	}
	if _, dup := sp.conns[a.Conn]; dup {
		mp.mu.Unlock()
		return messages.ServerInfo{}, protoErr(a.Server, "protocol session %d exists already", a.Conn)
	}
	sp.conns[a.Conn] = nil // connecting
	mp.mu.Unlock()

	c, err := s.protoDial(ctx, sp, sh, a.Server)
	mp.mu.Lock()
	if err == nil && (sp.ended || sp.early[a.Conn] || !sp.ns[a.Namespace] || mp.shared[a.Namespace] != sh) {
		err = messages.Errorf(messages.KindDisconnected, a.Server, "protocol %q was disposed (or the session ended) while it connected", a.Namespace)
		c.Close() // quick: the runtime's session is new and idle
	}
	delete(sp.early, a.Conn)
	if err != nil {
		delete(sp.conns, a.Conn)
		mp.mu.Unlock()
		return messages.ServerInfo{}, err
	}
	sp.conns[a.Conn] = &memberConn{ns: a.Namespace, c: c}
	s.calls.Add(1)
	mp.mu.Unlock()
	go s.watchConn(sp, a.Conn, c)
	return c.ServerInfo(), nil
}

// protoDial connects a protocol session on server: on the runtime, or on
// the member running it (protocol_peer.go).
func (s *Server) protoDial(ctx context.Context, sp *sessionProtos, sh *sharedProto, server string) (protoConn, error) {
	if c, handled, err := s.protoRelay(ctx, sp, sh, server); handled {
		return c, err
	}
	ps, err := sh.p.Connect(ctx, server)
	if err != nil {
		return nil, err
	}
	return localConn{ps}, nil
}

// protoConnOf is the session's protocol session id.
func (s *Server) protoConnOf(sp *sessionProtos, id uint64) (protoConn, error) {
	s.protos.mu.Lock()
	defer s.protos.mu.Unlock()
	c := sp.conns[id]
	if c == nil {
		return nil, messages.Errorf(messages.KindDisconnected, "", "protocol session %d has ended", id)
	}
	return c.c, nil
}

// protoOpen opens the session's stream (or observer) a.Stream on its
// protocol session a.Conn; its notifications go down the outbox.
func (s *Server) protoOpen(sp *sessionProtos, observer bool, a protoOpenArgs) error {
	mp := &s.protos
	mp.mu.Lock()
	c := sp.conns[a.Conn]
	_, dup := sp.strs[a.Stream]
	switch {
	case c == nil:
		mp.mu.Unlock()
		return messages.Errorf(messages.KindDisconnected, "", "protocol session %d has ended", a.Conn)
	case a.Stream == 0 || dup:
		mp.mu.Unlock()
		return protoErr("", "stream id %d is taken", a.Stream)
	}
	sp.strs[a.Stream] = nil // opening
	mp.mu.Unlock()
	id := a.Stream
	h := func(method string, params json.RawMessage) error {
		if !sp.out.push(&protoEventMsg{Kind: protoNote, Stream: id, Method: method, Params: params}, false) {
			return errSlow
		}
		return nil
	}
	var st protoStream
	var err error
	if observer {
		st, err = c.c.watch(a.Methods, h)
	} else {
		st, err = c.c.openStream(a.Method, a.Params, h)
	}
	mp.mu.Lock()
	if err != nil {
		delete(sp.strs, id)
		delete(sp.early, id)
		mp.mu.Unlock()
		return err
	}
	if sp.ended {
		mp.mu.Unlock()
		st.Cancel()
		return messages.Errorf(messages.KindDisconnected, "", "the session has ended")
	}
	early := sp.early[id]
	delete(sp.early, id)
	sp.strs[id] = st
	s.calls.Add(1)
	mp.mu.Unlock()
	go s.watchStream(sp, id, st)
	if early {
		st.Cancel()
	}
	return nil
}

// watchStream tells the session that stream id was written and how it
// ended, after every notification its handler queued.
func (s *Server) watchStream(sp *sessionProtos, id uint64, st protoStream) {
	defer s.calls.Done()
	sent := st.sentCh()
	for {
		select {
		case <-sent:
			sp.out.push(&protoEventMsg{Kind: protoSent, Stream: id}, true)
			sent = nil
		case <-st.Done():
			if sent != nil {
				select {
				case <-sent:
					sp.out.push(&protoEventMsg{Kind: protoSent, Stream: id}, true)
				default:
				}
			}
			end := st.Closed()
			s.protos.mu.Lock()
			delete(sp.strs, id)
			s.protos.mu.Unlock()
			sp.out.push(&protoEventMsg{Kind: protoEnd, Stream: id, End: &end}, true)
			return
		case <-sp.quit:
			return
		}
	}
}

// watchConn tells the session that its protocol session id ended.
func (s *Server) watchConn(sp *sessionProtos, id uint64, c protoConn) {
	defer s.calls.Done()
	select {
	case <-c.Done():
		s.protos.mu.Lock()
		if mc := sp.conns[id]; mc != nil && mc.c == c {
			delete(sp.conns, id)
		}
		s.protos.mu.Unlock()
		sp.out.push(&protoEventMsg{Kind: protoDone, Conn: id, Why: c.Why()}, true)
	case <-sp.quit:
	}
}
