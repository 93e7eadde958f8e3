package remote

import (
	"context"
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
)

// A protocol session on a server another member runs is relayed through
// this member's own session on that member (peers.go): the namespace is
// registered there once per such session (with the definition the
// sessions here share), and each protocol session here is one there, so
// its requests, streams and observers are as much its own as on this
// member. Another member's session (a relay itself) is never relayed
// again: a server its member does not run is refused there as unknown.

// protoRelay connects a protocol session on server through the member
// running it; handled is false when server is this member's to connect
// (or no member runs it: the runtime then says so).
func (s *Server) protoRelay(ctx context.Context, sp *sessionProtos, sh *sharedProto, server string) (c protoConn, handled bool, err error) {
	if sp.member {
		return nil, false, nil
	}
	peer, err := s.peerFor(ctx, server)
	if peer == nil && err == nil {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	rp, err := sh.relayOn(peer)
	if err != nil {
		return nil, true, err
	}
	ps, err := rp.Connect(ctx, server)
	if err != nil {
		return nil, true, err
	}
	return relayConn{ps}, true, nil
}

// relayOn returns the namespace's registration through session peer,
// registering it there on first use.
func (sh *sharedProto) relayOn(peer *Session) (*Protocol, error) {
	sh.relayMu.Lock()
	defer sh.relayMu.Unlock()
	if sh.gone {
		return nil, protoErr("", "protocol %q was disposed", sh.def.Namespace)
	}
	if p := sh.relays[peer]; p != nil {
		return p, nil
	}
	for old := range sh.relays { // sessions on members that were lost
		if !old.alive() {
			delete(sh.relays, old)
		}
	}
	p, err := peer.RegisterProtocol(sh.def)
	if err != nil {
		return nil, err
	}
	if sh.relays == nil {
		sh.relays = map[*Session]*Protocol{}
	}
	sh.relays[peer] = p
	return p, nil
}

type relayConn struct{ *ProtocolSession }

func (c relayConn) openStream(method string, params json.RawMessage, h mcprt.Handler) (protoStream, error) {
	st, err := c.OpenStream(method, params, h)
	if err != nil {
		return nil, err
	}
	return relayStream{st}, nil
}

func (c relayConn) watch(methods []string, h mcprt.Handler) (protoStream, error) {
	o, err := c.WatchNotifications(methods, h)
	if err != nil {
		return nil, err
	}
	return relayObserver{o}, nil
}

type relayStream struct{ *Stream }

func (s relayStream) sentCh() <-chan struct{} { return s.Sent() }

type relayObserver struct{ *Observer }

func (o relayObserver) Cancel()                 { o.Close() }
func (o relayObserver) sentCh() <-chan struct{} { return nil }
