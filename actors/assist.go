package actors

import (
	"context"

	"github.com/mcprt/mcprt/messages"
)

// awaitAssisted is await for a Request whose caller lends its goroutine to
// the connection port (messages.Assist): while it waits, it runs the
// blocking work the port offers (an HTTP exchange), so a call goes out from
// and comes back on the caller's goroutine. While it runs such work, ctx
// ending aborts the operation as await does (the port's work then ends
// promptly). When it stops waiting it closes the Assist, so work offered
// later, or not taken, runs on the port's own goroutines.
func awaitAssisted(ctx context.Context, s *System, server string, token messages.Token, ch chan messages.Reply, assist *messages.Assist) messages.Reply {
	for {
		select {
		case r := <-ch:
			assist.Close()
			return r
		case <-assist.Wake():
			if job := assist.Take(); job != nil {
				runAssisted(ctx, s, server, token, job)
			}
			continue
		case <-ctx.Done():
		case <-s.done:
		}
		break
	}
	assist.Close()
	return await(ctx, s, server, token, ch, func(e *messages.Error) messages.Reply { return messages.Reply{Err: e} })
}

// runAssisted runs job on the caller's goroutine; if ctx ends meanwhile the
// operation is aborted, which ends the job's exchange.
func runAssisted(ctx context.Context, s *System, server string, token messages.Token, job func()) {
	if ctx.Done() == nil {
		job()
		return
	}
	stop := context.AfterFunc(ctx, func() { s.Post(server, &messages.Abort{Token: token}) })
	job()
	stop()
}
