package messages

import "context"

// A caller is the host's own tag for one call (for example the attached
// session a shared runtime runs it for). It travels, opaque, from the
// call's context through Request and Op to the transport, which hands it
// back on the server requests it can tie to that call (ServerRequest.
// Caller): a request read from the call's own HTTP response stream, or
// an input request of a 2026-07-28 call. Nothing in the runtime reads it.
type callerKey struct{}

// WithCaller returns ctx carrying the caller tag v.
func WithCaller(ctx context.Context, v any) context.Context {
	return context.WithValue(ctx, callerKey{}, v)
}

// CallerOf returns the caller tag ctx carries (nil for none).
func CallerOf(ctx context.Context) any {
	if ctx == nil {
		return nil
	}
	return ctx.Value(callerKey{})
}
