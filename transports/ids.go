package transports

import (
	"strconv"
	"sync/atomic"

	"github.com/mcprt/mcprt/messages"
)

// idSource makes the JSON-RPC ids of one connection: the dial's random
// prefix and a counter, as strings, so they never collide with a server's
// or another client's numeric ids.
type idSource struct {
	prefix string
	n      atomic.Uint64
}

func (s *idSource) next() string {
	return s.prefix + "-h" + strconv.FormatUint(s.n.Add(1), 10)
}

func (s *idSource) forOp(id messages.OpID) string {
	return s.prefix + "-" + strconv.FormatUint(uint64(id), 10)
}
