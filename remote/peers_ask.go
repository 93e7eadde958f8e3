package remote

import (
	"context"
	"encoding/json"
	"fmt"
)

// peerAnswer is one live member's answer to an operation asked of every
// live member (askPeers).
type peerAnswer struct {
	p   *peerLink
	b   json.RawMessage
	err error
}

// askPeers asks every live member op (no arguments) at once, through
// this member's session on each, waiting at most PeerCatalogBound: a
// member that cannot be reached, or has not answered by then, is
// answered with an error saying so. In the membership's order. So a
// status through a member never waits on another member that takes
// connections and says nothing (its session's own timeout is longer).
func (s *Server) askPeers(ctx context.Context, op string) []peerAnswer {
	peers := s.livePeers()
	out := make([]peerAnswer, len(peers))
	type answer struct {
		i   int
		b   json.RawMessage
		err error
	}
	answers := make(chan answer, len(peers)) // no asker waits to send
	bctx, cancel := context.WithCancel(ctx)
	defer cancel() // the askers still waiting give up
	t := s.clock.AfterFunc(PeerCatalogBound, cancel)
	defer t.Stop()
	for i, p := range peers {
		out[i].p = p
		go func() {
			ps, err := p.session(bctx, s)
			var b json.RawMessage
			if err == nil {
				b, err = ps.request(bctx, op, "", nil)
			}
			answers <- answer{i, b, err}
		}()
	}
	for left := len(peers); left > 0; left-- {
		select {
		case a := <-answers:
			out[a.i].b, out[a.i].err = a.b, a.err
			if a.err != nil && bctx.Err() != nil && ctx.Err() == nil {
				out[a.i].err = fmt.Errorf("it did not answer within %s", PeerCatalogBound)
			}
		case <-bctx.Done():
			why := fmt.Errorf("it did not answer within %s", PeerCatalogBound)
			if ctx.Err() != nil {
				why = fmt.Errorf("the request ended first")
			}
			for i := range out {
				if out[i].b == nil && out[i].err == nil {
					out[i].err = why
				}
			}
			return out
		}
	}
	return out
}
