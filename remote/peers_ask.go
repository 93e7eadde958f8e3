package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// peerAnswer is one live member's answer to an operation asked of every
// live member (askPeers).
type peerAnswer struct {
	p   *peerLink
	b   json.RawMessage
	err error
}

// askPeers asks every live member op (name, args) at once, through
// this member's session on each, waiting at most PeerCatalogBound: a
// member that cannot be reached, or has not answered by then, is
// answered with an error saying so. In the membership's order. So a
// status through a member never waits on another member that takes
// connections and says nothing (its session's own timeout is longer).
func (s *Server) askPeers(ctx context.Context, op, name string, args json.RawMessage) []peerAnswer {
	peers := s.livePeers()
	bs, errs := askAll(ctx, s.clock, len(peers), PeerCatalogBound, "the request ended first",
		func(ctx context.Context, i int) (json.RawMessage, error) {
			ps, err := peers[i].session(ctx, s)
			if err != nil {
				return nil, err
			}
			return ps.request(ctx, op, name, args)
		})
	out := make([]peerAnswer, len(peers))
	for i, p := range peers {
		out[i] = peerAnswer{p: p, b: bs[i], err: errs[i]}
	}
	return out
}

// askAll runs ask(i) for each of n members at once and waits at most
// bound: a member that has not answered by then is answered with an error
// saying so (ended when ctx ended first), as is one whose ask failed once
// the bound had passed. The askers still waiting then give up (their
// context ends); none is waited for.
func askAll[T any](ctx context.Context, clk clock.Clock, n int, bound time.Duration, ended string, ask func(ctx context.Context, i int) (T, error)) ([]T, []error) {
	vals, errs := make([]T, n), make([]error, n)
	type answer struct {
		i   int
		v   T
		err error
	}
	answers := make(chan answer, n) // no asker waits to send
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := clk.AfterFunc(bound, cancel)
	defer t.Stop()
	for i := range n {
		go func() {
			v, err := ask(bctx, i)
			answers <- answer{i, v, err}
		}()
	}
	answered := make([]bool, n)
	for left := n; left > 0; left-- {
		select {
		case a := <-answers:
			answered[a.i] = true
			vals[a.i], errs[a.i] = a.v, a.err
			if a.err != nil && bctx.Err() != nil && ctx.Err() == nil {
				errs[a.i] = fmt.Errorf("it did not answer within %s", bound)
			}
		case <-bctx.Done():
			why := fmt.Errorf("it did not answer within %s", bound)
			if ctx.Err() != nil {
				why = errors.New(ended)
			}
			for i := range errs {
				if !answered[i] {
					errs[i] = why
				}
			}
			return vals, errs
		}
	}
	return vals, errs
}
