package simtests

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// The host's side of MCP events: the mcp_events tool's four actions as
// host operations, and the wakeups the runtime delivers (traced compactly:
// which events reached which subscription, and each status item).

// hostSub is one subscription the host holds (a subscribe answered ok).
type hostSub struct {
	id, server, name string
	args             string // the subscribe's arguments as given ("" for none)
	start            int    // the sequence number its first acknowledgement stood at
}

// eventsTool calls the mcp_events tool with input.
func (h *Host) eventsTool(input map[string]any) func(context.Context) outcome {
	tool, _ := h.w.rt.Tool(mcprt.EventsToolName)
	raw, _ := json.Marshal(input)
	return func(ctx context.Context) outcome {
		r := tool.Execute(ctx, raw)
		o := outcome{ok: !r.IsError, code: r.ErrorCode(), text: r.Text}
		o.server, _ = r.Details["server"].(string)
		if s, ok := r.Details["subscription"].(eventstream.Snapshot); ok {
			o.text, o.snaps = describeSnapshot(s), []eventstream.Snapshot{s}
		}
		if evs, ok := r.Details["events"].([]eventstream.Descriptor); ok {
			var names []string
			for _, d := range evs {
				names = append(names, d.Name+":"+strings.Join(d.Delivery, "+"))
			}
			o.text = "events=[" + strings.Join(names, " ") + "]"
		}
		if subs, ok := r.Details["subscriptions"].([]eventstream.Snapshot); ok {
			o.snaps = subs
			var rows []string
			for _, s := range subs {
				rows = append(rows, describeSnapshot(s))
			}
			o.text, o.rows = fmt.Sprintf("%d subscriptions", len(subs)), rows
		}
		return o
	}
}

// Subscribe subscribes to an event through the mcp_events tool. args is a
// JSON object ("" for none), cursor "" for none, maxAge < 0 for none.
func (h *Host) Subscribe(id, server, name, args, cursor string, maxAge int) error {
	in := map[string]any{"action": "subscribe", "server": server, "name": name}
	what := fmt.Sprintf("subscribe %s %s", server, name)
	if args != "" {
		in["arguments"] = json.RawMessage(args)
		what += " " + args
	}
	if cursor != "" {
		in["cursor"] = cursor
		what += " cursor=" + cursor
	}
	if maxAge >= 0 {
		in["max_age_ms"] = maxAge
		what += " max-age-ms=" + strconv.Itoa(maxAge)
	}
	h.w.inv.evSubscribing(server, name, args)
	return h.start(&hostOp{id: id, kind: "esub", what: what, server: server, evName: name, evArgs: args}, h.eventsTool(in))
}

// Unsubscribe stops a subscription (by the host's subscribe op id or the
// subscription's own id).
func (h *Host) Unsubscribe(id, sub string) error {
	if op := h.byID[sub]; op != nil && op.kind == "esub" && len(op.res.snaps) == 1 {
		sub = op.res.snaps[0].ID
	}
	h.w.inv.evUnsubscribing(sub)
	return h.start(&hostOp{id: id, kind: "eunsub", what: "unsubscribe " + sub}, h.eventsTool(map[string]any{"action": "unsubscribe", "subscription_id": sub}))
}

// EventsList lists the subscriptions. With check, the list is the
// accounting checkpoint (checker.evAccount): the caller has made sure
// nothing is in flight and every batch has flushed.
func (h *Host) EventsList(id string, check bool) error {
	op := &hostOp{id: id, kind: "elist", what: "events list", check: check}
	return h.start(op, h.eventsTool(map[string]any{"action": "list"}))
}

// Catalog fetches a server's event catalog.
func (h *Host) Catalog(id, server string) error {
	return h.start(&hostOp{id: id, kind: "ecat", what: "events catalog " + server, server: server},
		h.eventsTool(map[string]any{"action": "catalog", "server": server}))
}

// describeSnapshot renders a subscription for the trace.
func describeSnapshot(s eventstream.Snapshot) string {
	cur, ok := s.Cursor.Value()
	if !ok {
		cur = "null"
	}
	out := fmt.Sprintf("%s %s/%s %s cursor=%s", s.ID, s.Server, s.Name, s.Status, cur)
	if s.Truncated {
		out += " truncated"
	}
	if s.EndReason != "" {
		out += " end=" + string(s.EndReason)
	}
	if s.Error != "" {
		out += " error=" + strconv.Quote(s.Error)
	}
	return out
}

// evSubscribed records a subscription a subscribe op returned.
func (h *Host) evSubscribed(op *hostOp) {
	if len(op.res.snaps) != 1 {
		return
	}
	s := op.res.snaps[0]
	if h.subs == nil {
		h.subs = map[string]*hostSub{}
	}
	if h.subs[s.ID] != nil {
		return // an identical subscription, reused
	}
	start := 0
	if cur, ok := s.Cursor.Value(); ok {
		start, _ = strconv.Atoi(strings.TrimPrefix(cur, "c"))
	}
	evTotals.subscriptions.Add(1)
	h.subs[s.ID] = &hostSub{id: s.ID, server: s.Server, name: s.Name, args: op.evArgs, start: start}
	h.subOrder = append(h.subOrder, s.ID)
}

// deliverEvents traces a wakeup and hands it to the invariants.
func (h *Host) deliverEvents(m messages.HostMessage) bool {
	switch d := m.Details.(type) {
	case eventstream.EventsDetails:
		by := map[string][]string{}
		var subs []string
		for _, it := range d.Events {
			if by[it.SubscriptionID] == nil {
				subs = append(subs, it.SubscriptionID)
			}
			id := it.Event.EventID
			if it.ReplayTruncated {
				id += "(gap)"
			}
			if len(it.Event.Data) > 0 && strings.Contains(string(it.Event.Data), `"truncated":true`) {
				id += "(preview)"
			}
			by[it.SubscriptionID] = append(by[it.SubscriptionID], id)
		}
		sort.Strings(subs)
		parts := make([]string, 0, len(subs))
		for _, s := range subs {
			parts = append(parts, s+":"+strings.Join(by[s], ","))
		}
		h.w.Tracef("host wake events %s dropped=%d%s", strings.Join(parts, " "), d.DroppedEvents, wakeFlags(m))
		h.w.inv.evDelivered(d)
		h.w.inv.evWakeKeys(m.Text)
		return true
	case eventstream.StatusDetails:
		h.w.Tracef("host wake status dropped=%d%s", d.DroppedStatuses, wakeFlags(m))
		for _, s := range d.Subscriptions {
			h.w.Tracef("  %s", describeSnapshot(s))
		}
		h.w.inv.evStatus(d)
		return true
	}
	return false
}

// wakeFlags says what is wrong with how a wakeup asks to be delivered.
func wakeFlags(m messages.HostMessage) string {
	out := ""
	if !m.TriggerTurn {
		out += " NO-TURN"
	}
	if m.DeliverAs != eventstream.DeliverAs {
		out += " deliver-as=" + m.DeliverAs
	}
	return out
}
