package mcpserve

import (
	"context"
	"errors"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// ErrNoRequest is returned by the notification helpers when ctx is not the
// context of a request this package is serving.
var ErrNoRequest = errors.New("mcpserve: not a request's context")

// Progress sends notifications/progress for the request ctx belongs to, if
// its client asked for progress (a progressToken in _meta); otherwise it
// does nothing. total ≤ 0 and message "" are left out.
func Progress(ctx context.Context, progress, total float64, message string) error {
	c := callFrom(ctx)
	if c == nil {
		return ErrNoRequest
	}
	if c.progress == nil {
		return nil
	}
	return c.notify(string(mcp.MethodNotificationProgress), mcp.ProgressNotificationParams{
		ProgressToken: c.progress, Progress: progress, Total: total, Message: message,
	})
}

// Log sends notifications/message for the request ctx belongs to when the
// client wants messages of that level: a 2026-07-28 request names its
// level in _meta; an older session sets one with logging/setLevel (the
// server must declare [Options.Logging]). Otherwise it does nothing.
func Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	c := callFrom(ctx)
	if c == nil {
		return ErrNoRequest
	}
	want := c.logLevel
	if !c.modern {
		c.ss.mu.Lock()
		want = c.ss.level
		c.ss.mu.Unlock()
	}
	at, min := slices.Index(levels, level), slices.Index(levels, want)
	if want == "" || at < 0 || at < min {
		return nil
	}
	return c.notify(string(mcp.MethodNotificationMessage), mcp.LoggingMessageNotificationParams{Level: level, Logger: logger, Data: data})
}

// Notify sends a notification that belongs to the request ctx belongs to
// (on Streamable HTTP, on the request's own response stream).
func Notify(ctx context.Context, method string, params any) error {
	c := callFrom(ctx)
	if c == nil {
		return ErrNoRequest
	}
	return c.notify(method, params)
}

func (c *call) notify(method string, params any) error {
	msg, err := notification(method, params)
	if err != nil {
		return err
	}
	return c.out(msg)
}
