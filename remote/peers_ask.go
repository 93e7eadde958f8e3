package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// askAll runs ask(ctx, i) for every i < n at once and waits at most
// bound for them: one that has not answered by then (or answered only
// because the bound cancelled it) is late(i, why), why saying so (or
// that ctx ended first). The askers still running give up with ctx,
// which askAll cancels on return; none waits to deliver. So a request
// through a member never waits longer on another member that takes
// connections and says nothing (its session's own timeouts are longer).
func askAll[T any](ctx context.Context, clk clock.Clock, n int, bound time.Duration, ask func(context.Context, int) T, late func(int, error) T) []T {
	out := make([]T, n)
	done := make([]bool, n)
	type answer struct {
		i int
		v T
	}
	answers := make(chan answer, n)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := clk.AfterFunc(bound, cancel)
	defer t.Stop()
	for i := range n {
		go func() { answers <- answer{i, ask(bctx, i)} }()
	}
	for left := n; left > 0 && bctx.Err() == nil; left-- {
		select {
		case a := <-answers:
			if bctx.Err() == nil {
				out[a.i], done[a.i] = a.v, true
			}
		case <-bctx.Done():
		}
	}
	if bctx.Err() != nil {
		why := fmt.Errorf("it did not answer within %s", bound)
		if ctx.Err() != nil {
			why = fmt.Errorf("the request ended first")
		}
		for i := range out {
			if !done[i] {
				out[i] = late(i, why)
			}
		}
	}
	return out
}

// peerAnswer is one live member's answer to an operation asked of every
// live member (askPeers).
type peerAnswer struct {
	p   *peerLink
	b   json.RawMessage
	err error
}

// askPeers asks every live member op (no arguments) at once, through
// this member's session on each, waiting at most PeerCatalogBound (see
// askAll); a member that cannot be reached is answered with the error.
// In the membership's order.
func (s *Server) askPeers(ctx context.Context, op string) []peerAnswer {
	peers := s.livePeers()
	return askAll(ctx, s.clock, len(peers), PeerCatalogBound, func(ctx context.Context, i int) peerAnswer {
		a := peerAnswer{p: peers[i]}
		ps, err := a.p.session(ctx, s)
		if err == nil {
			a.b, err = ps.request(ctx, op, "", nil)
		}
		a.err = err
		return a
	}, func(i int, why error) peerAnswer { return peerAnswer{p: peers[i], err: why} })
}
