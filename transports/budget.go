package transports

import (
	"errors"
	"sync/atomic"
)

// DefaultResponseBudget is the runtime-wide budget for response bytes in
// flight on HTTP connections (Dialer.ResponseBudget,
// mcprt.Options.MaxResponseBytesInFlight): 256 MiB.
const DefaultResponseBudget = 256 << 20

// errBudget reports a response that would take the bytes in flight over
// the runtime's budget.
var errBudget = errors.New("transports: response bytes in flight over the runtime's budget")

// budget counts the response bytes being read, across every HTTP
// connection of a Dialer: each JSON body and each SSE stream takes what it
// has read and not yet handed on, and gives it back when it has (a body at
// Close, an SSE event once the client has read it). A read that would take the
// total over the limit fails with errBudget, so the heap cannot grow with
// the number of concurrent large responses: that call fails with
// resource_exhausted instead. (A JSON body is read into one buffer of its
// size, which its result keeps.) stdio and socket connections read one line at
// a time each (at most 16 MiB per server) and are not counted.
type budget struct {
	limit int64 // <= 0: no limit
	used  atomic.Int64
}

func newBudget(limit int64) *budget {
	switch {
	case limit == 0:
		limit = DefaultResponseBudget
	case limit < 0:
		limit = 0
	}
	return &budget{limit: limit}
}

// take reserves n bytes, or reports that they would exceed the budget.
func (b *budget) take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	if used := b.used.Add(n); b.limit > 0 && used > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n reserved bytes.
func (b *budget) give(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// charge keeps what one reader holds reserved equal to want bytes.
type charge struct {
	b    *budget
	held int64
}

// set reserves or returns the difference; false when reserving failed
// (nothing changes then).
func (c *charge) set(want int64) bool {
	switch {
	case want > c.held:
		if !c.b.take(want - c.held) {
			return false
		}
	case want < c.held:
		c.b.give(c.held - want)
	}
	c.held = want
	return true
}
