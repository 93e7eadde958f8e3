package actors

import (
	"encoding/json"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Refresh asks a server actor to make its catalog current: connect as the
// lifecycle allows (Origin decides failure memory), then list tools,
// resources and resource templates (when the server has resources),
// prompts (when it has prompts) and record them with its instructions, in
// memory and in the disk cache. Concurrent refreshes of one connection
// share one listing; a catalog already listed on the live connection and
// not changed since answers at once unless Force is set (Fresh also
// reconnects first). It is defined here rather than in messages because it
// concerns the catalog the actors own.
type Refresh struct {
	Token  messages.Token
	Origin messages.Origin
	// Fresh replaces a live connection with a new one first (an explicit
	// reconnect).
	Fresh bool
	// Force lists again even if the catalog is current.
	Force bool
	// Reply is called once with nil or why the listing failed; nil Reply
	// means nobody waits (a background fill).
	Reply func(*messages.Error)
}

// Fail answers the refresh with err (nil: the catalog is current).
func (r *Refresh) Fail(err *messages.Error) {
	if r.Reply != nil {
		r.Reply(err)
	}
}

// catalogEffect publishes what the core decided about the catalog: to the
// in-memory catalog, the disk cache and the tool count of the status.
func (s *serverActor) catalogEffect(e supervisor.Effect) {
	name := s.cfg.Name
	switch e := e.(type) {
	case supervisor.PublishInfo:
		s.env.catalog.setInstructions(name, s.info.Instructions)
	case supervisor.ToolsListed:
		s.toolsListed(e.Items)
	case supervisor.CatalogListed:
		l := e.Listing.(*catalog.Listing)
		now := s.now()
		s.tools = len(l.Entry.Tools)
		s.env.catalog.setLive(name, l.Entry, l.Notes, now)
		if s.env.cache != nil && s.cfg.CacheKey != "" {
			s.env.cache.write(name, s.cfg.CacheKey, l.Entry, now)
		}
	case supervisor.Withdraw:
		if e.Reset {
			s.tools = 0
		}
		s.env.catalog.setFailed(name, e.Err)
	case supervisor.ListError:
		s.env.catalog.setListError(name, e.Err)
	case supervisor.CatalogStale:
		s.env.catalog.markStale(name)
	}
}

// toolsListed records a successful tools/list, for status and the
// catalog.
func (s *serverActor) toolsListed(items []json.RawMessage) {
	if err := catalog.CheckList("tools", items); err != nil {
		s.env.catalog.setFailed(s.cfg.Name, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s", err))
		return
	}
	tools, rejected, err := catalog.AdmitTools(items)
	if err != nil {
		s.env.catalog.setFailed(s.cfg.Name, messages.Errorf(messages.KindProtocol, s.cfg.Name, "tools catalog: %s", err))
		return
	}
	s.tools = len(tools)
	s.env.catalog.setTools(s.cfg.Name, tools, rejected, s.now())
}
