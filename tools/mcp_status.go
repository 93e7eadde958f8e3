package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// StatusSnapshot is the runtime's status in machine-readable form, for
// hosts (Runtime.Status, Runtime.WatchStatus) and the details of the mcp
// tool's status mode. Reading it never connects anything.
type StatusSnapshot struct {
	// Version is the snapshot format's version (1).
	Version int `json:"version"`
	// Servers are the configured servers in configuration order.
	Servers        []ServerStatus `json:"servers"`
	TotalTools     int            `json:"totalTools"`
	TotalResources int            `json:"totalResources"`
	ConnectedCount int            `json:"connectedCount"`
	DisabledCount  int            `json:"disabledCount"`
	// Skipped are the configured servers that were dropped, with why.
	Skipped []SkippedServer `json:"skipped,omitempty"`
}

// ServerStatus is one server in a StatusSnapshot.
type ServerStatus struct {
	Name string `json:"name"`
	// Member is, through a member of a shared runtime's cluster, the
	// address of the other member whose server this is (it runs it there,
	// or it failed there); empty for the asked member's own.
	Member string `json:"member,omitempty"`
	// Status is connected, degraded (connected, but its tools listing
	// failed: LastError says why), connecting, cached (not connected,
	// metadata from the cache or an earlier connection), failed,
	// needs-auth, not-connected or disabled.
	Status string `json:"status"`
	// ToolCount is the number of tools the server exposes (after
	// includeTools/excludeTools, resource tools included); 0 when unknown.
	ToolCount int `json:"toolCount"`
	// ResourceCount is the number of resources, when known.
	ResourceCount *int `json:"resourceCount,omitempty"`
	// FailedAgoSeconds is how long ago the server's last connect failed,
	// only while that failure is remembered.
	FailedAgoSeconds *int `json:"failedAgoSeconds,omitempty"`
	Disabled         bool `json:"disabled"`
	// LastError is the sanitized reason of a failure (failed, needs-auth,
	// degraded).
	LastError string `json:"lastError,omitempty"`
	// UnsupportedTools counts the tools of the server's listing that are
	// refused (invalid or duplicate name) or unsupported (an input schema a
	// provider would refuse); Rejections names at most five of them and
	// OmittedRejections counts the rest (seed 003).
	UnsupportedTools  int                     `json:"unsupportedTools,omitempty"`
	Rejections        []catalog.ToolRejection `json:"rejections,omitempty"`
	OmittedRejections int                     `json:"omittedRejections,omitempty"`
}

// failureShown is how long a failed connect shows as failed: the lifecycle's
// failure memory.
const failureShown = 60 * time.Second

// Snapshot builds the status snapshot from the servers' last published
// statuses and the catalog.
func (m *MCP) Snapshot() StatusSnapshot {
	statuses := m.src.Statuses()
	now := m.src.Clock().Now()
	v := m.view()
	out := StatusSnapshot{Version: 1, Servers: make([]ServerStatus, 0, len(statuses)), Skipped: m.opts.Skipped}
	for _, s := range statuses {
		count, known := v.count(s.Name)
		row := ServerStatus{Name: s.Name, ToolCount: count}
		if known {
			c := v.snap.Server(s.Name)
			n := len(c.Resources)
			row.ResourceCount = &n
			row.UnsupportedTools = len(c.Rejections)
			row.Rejections = c.Rejections[:min(len(c.Rejections), catalog.MaxRejections)]
			row.OmittedRejections = len(c.Rejections) - len(row.Rejections)
		}
		switch {
		case s.State == messages.StateDisabled:
			row.Status, row.Disabled, row.ToolCount, row.ResourceCount = "disabled", true, 0, nil
			row.UnsupportedTools, row.Rejections, row.OmittedRejections = 0, nil, 0
			out.DisabledCount++
		case s.State == messages.StateConnected && s.CatalogError != nil:
			// Connected, but its tools could not be listed: not counted
			// as connected, and the reason is shown.
			row.Status, row.LastError = "degraded", s.CatalogError.Message
		case s.State == messages.StateConnected:
			row.Status = "connected"
			out.ConnectedCount++
		case s.State == messages.StateConnecting || s.State == messages.StateBackoff:
			row.Status = "connecting"
		case (s.State == messages.StateFailed || s.State == messages.StateDown) && s.LastError != nil && s.LastError.Kind == messages.KindAuthRequired:
			row.Status, row.LastError = "needs-auth", s.LastError.Message
		case s.State == messages.StateDown || s.State == messages.StateFailed && now.Sub(s.FailedAt) < failureShown:
			row.Status = "failed"
			if !s.FailedAt.IsZero() {
				ago := int(now.Sub(s.FailedAt) / time.Second)
				row.FailedAgoSeconds = &ago
			}
			if s.LastError != nil {
				row.LastError = s.LastError.Message
			}
		case known:
			row.Status = "cached"
		default:
			row.Status = "not-connected"
		}
		if !row.Disabled {
			out.TotalTools += row.ToolCount
			if row.ResourceCount != nil {
				out.TotalResources += *row.ResourceCount
			}
		}
		out.Servers = append(out.Servers, row)
	}
	return out
}

// statusRow renders one server as the status mode shows it.
func statusRow(s ServerStatus) string {
	switch s.Status {
	case "connected":
		return fmt.Sprintf("✓ %s (%d tools)", s.Name, s.ToolCount)
	case "degraded":
		return fmt.Sprintf("⚠ %s (degraded: tools listing failed: %s)", s.Name, oneLine(s.LastError))
	case "connecting":
		return fmt.Sprintf("… %s (connecting)", s.Name)
	case "cached":
		return fmt.Sprintf("○ %s (%d tools, cached)", s.Name, s.ToolCount)
	case "needs-auth":
		return fmt.Sprintf("⚠ %s (needs auth)", s.Name)
	case "failed":
		if s.FailedAgoSeconds == nil {
			return fmt.Sprintf("✗ %s (down after repeated crashes)", s.Name)
		}
		return fmt.Sprintf("✗ %s (failed %d s ago)", s.Name, *s.FailedAgoSeconds)
	case "disabled":
		return fmt.Sprintf("⊘ %s (disabled)", s.Name)
	}
	return fmt.Sprintf("○ %s (not connected)", s.Name)
}

// skippedRows renders the skipped servers as status rows.
func skippedRows(skipped []SkippedServer) []string {
	var out []string
	for _, s := range skipped {
		out = append(out, fmt.Sprintf("⊘ %s (skipped: %s)", s.Name, s.Reason))
	}
	return out
}

// rejectionLines names a server's refused and unsupported tools under its
// status row.
func rejectionLines(s ServerStatus) []string {
	if s.UnsupportedTools == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("  %d %s of %s not offered or unsupported:", s.UnsupportedTools, plural(s.UnsupportedTools, "tool"), s.Name)}
	for _, r := range s.Rejections {
		out = append(out, "  - "+describeRejection(r))
	}
	if s.OmittedRejections > 0 {
		out = append(out, fmt.Sprintf("  - and %d more", s.OmittedRejections))
	}
	return out
}

// describeRejection renders one rejection: the tool's position, its name
// when valid, the code and the reason.
func describeRejection(r catalog.ToolRejection) string {
	who := fmt.Sprintf("tool %d", r.Index)
	if r.Name != "" {
		who += " " + quote(r.Name)
	}
	return who + " (" + r.Code + "): " + r.Message
}

// PeerStatus is what a Peers that also offers the other members'
// statuses implements: the status mode then shows every member's servers.
type PeerStatus interface {
	// Status returns this runtime's status merged with the other live
	// members' (each of their servers with its Member set); ok is false
	// when there is nothing to merge (the runtime's own status stands).
	Status(ctx context.Context) (snap StatusSnapshot, ok bool)
}

// status is the status mode: one line per server, read without
// connecting anything; through a member of a cluster, the other members'
// servers too, marked with their member.
func (m *MCP) status(ctx context.Context) Result {
	if h := m.peers.Load(); h != nil {
		if ps, ok := h.p.(PeerStatus); ok {
			if snap, ok := ps.Status(ctx); ok {
				return statusResult(snap)
			}
		}
	}
	return statusResult(m.Snapshot())
}

// statusResult renders a status snapshot as the status mode shows it.
func statusResult(snap StatusSnapshot) Result {
	if len(snap.Servers) == 0 {
		text := "MCP: no servers configured"
		if len(snap.Skipped) > 0 {
			text = fmt.Sprintf("MCP: no valid servers remain (%d configured %s skipped)", len(snap.Skipped), plural(len(snap.Skipped), "server was"))
			text = strings.Replace(text, "servers was", "servers were", 1)
			text += "\n" + strings.Join(skippedRows(snap.Skipped), "\n")
		}
		return Result{Text: text, Details: map[string]any{"servers": []ServerStatus{}, "totalTools": 0, "connectedCount": 0, "disabledCount": 0, "skipped": snap.Skipped}}
	}
	enabled := len(snap.Servers) - snap.DisabledCount
	head := fmt.Sprintf("MCP: %d/%d servers connected, %d tools", snap.ConnectedCount, enabled, snap.TotalTools)
	if snap.DisabledCount > 0 {
		head += fmt.Sprintf(" (%d disabled)", snap.DisabledCount)
	}
	lines := []string{head}
	for _, s := range snap.Servers {
		row := statusRow(s)
		if s.Member != "" {
			row += ", on the member at " + s.Member
		}
		lines = append(lines, row)
		lines = append(lines, rejectionLines(s)...)
	}
	lines = append(lines, skippedRows(snap.Skipped)...)
	return Result{Text: strings.Join(lines, "\n"), Details: map[string]any{
		"servers": snap.Servers, "totalTools": snap.TotalTools, "totalResources": snap.TotalResources,
		"connectedCount": snap.ConnectedCount, "disabledCount": snap.DisabledCount, "skipped": snap.Skipped,
	}}
}
