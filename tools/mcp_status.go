package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/messages"
)

// marker is the status row marker of each state.
func marker(s messages.ServerStatus) string {
	switch s.State {
	case messages.StateConnected:
		return "✓"
	case messages.StateFailed, messages.StateDown:
		return "✗"
	case messages.StateDisabled:
		return "⊘"
	case messages.StateConnecting, messages.StateBackoff:
		return "…"
	}
	return "○"
}

func (m *MCP) status(ctx context.Context) Result {
	statuses := m.sys.Status(ctx)
	now := m.sys.Clock().Now()
	connected, disabled, total := 0, 0, 0
	var rows []string
	var servers []map[string]any
	for _, s := range statuses {
		row := map[string]any{"name": s.Name, "status": s.State.String(), "toolCount": s.ToolCount}
		tools, known, _ := m.sys.Catalog().Tools(s.Name)
		count := s.ToolCount
		if count < 0 && known {
			count = len(tools)
		}
		if count > 0 {
			total += count
		}
		var note string
		switch s.State {
		case messages.StateConnected:
			connected++
			note = "connected, tools not listed yet"
			if count >= 0 {
				note = fmt.Sprintf("%d tools", count)
			}
		case messages.StateDisabled:
			disabled++
			note = "disabled"
		case messages.StateFailed:
			ago := int(now.Sub(s.FailedAt).Seconds())
			row["failedAgo"] = ago
			note = fmt.Sprintf("failed %d s ago", ago)
		case messages.StateDown:
			note = "down after repeated crashes"
		case messages.StateConnecting:
			note = "connecting"
		case messages.StateBackoff:
			note = "reconnecting"
		default:
			note = "not connected"
			if known {
				note = fmt.Sprintf("%d tools, not connected", count)
			}
		}
		if s.LastError != nil && (s.State == messages.StateFailed || s.State == messages.StateBackoff || s.State == messages.StateDown) {
			row["lastError"] = s.LastError.Message
		}
		rows = append(rows, fmt.Sprintf("%s %s (%s)", marker(s), s.Name, note))
		servers = append(servers, row)
	}
	enabled := len(statuses) - disabled
	head := fmt.Sprintf("MCP: %d/%d servers connected, %d tools", connected, enabled, total)
	if disabled > 0 {
		head += fmt.Sprintf(" (%d disabled)", disabled)
	}
	if len(statuses) == 0 {
		head = "MCP: no servers configured"
	}
	return Result{
		Text:    strings.Join(append([]string{head}, rows...), "\n"),
		Details: map[string]any{"servers": servers, "totalTools": total, "connectedCount": connected, "disabledCount": disabled},
	}
}
