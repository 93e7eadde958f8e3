package config

import (
	"bytes"
	"encoding/json"
	"sort"
)

// foreignSettings are settings of the adapter mcprt follows that this
// version does not implement; they are ignored with a notice, not a
// warning.
var foreignSettings = map[string]bool{
	"showStatusIcon": true, "mcpFooterStatus": true, "hostConfigDiscovery": true, "oauthDir": true,
	"sampling": true, "samplingAutoApprove": true,
	"elicitation": true, "agentPluginPaths": true,
}

// parseSettings decodes merged settings key by key. A bad value drops that
// setting (reported); the others stay.
func parseSettings(raw map[string]json.RawMessage, from map[string]string) (Settings, []Issue, []Issue) {
	var set Settings
	var issues, notices []Issue
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := func(k, msg string) {
		issues = append(issues, Issue{File: from[k], Field: "settings." + fieldLabel(k), Message: msg + " (the setting is ignored)"})
	}
	for _, k := range keys {
		v := raw[k]
		switch k {
		case "idleTimeout":
			var f float64
			if json.Unmarshal(v, &f) != nil || f < 0 || f > 1e6 {
				bad(k, "must be a number of minutes from 0 (never) to 1000000")
				continue
			}
			set.IdleTimeout = &f
		case "requestTimeoutMs":
			n, whole := wholeNumber(v)
			if !whole || n < 0 || n > 2147483647 {
				bad(k, "must be an integer number of milliseconds from 0 to 2147483647")
				continue
			}
			set.RequestTimeoutMs = &n
		case "npxInstallTimeoutMs":
			n, whole := wholeNumber(v)
			if !whole || n < 1 || n > 2147483647 {
				bad(k, "must be an integer number of milliseconds from 1 to 2147483647")
				continue
			}
			set.NpxInstallTimeoutMs = &n
		case "directTools":
			var d DirectTools
			if d.UnmarshalJSON(v) != nil {
				bad(k, "must be true, false or a list of tool names")
				continue
			}
			set.DirectTools = &d
		case "toolPrefix":
			var s string
			if json.Unmarshal(v, &s) != nil || (s != "server" && s != "short" && s != "none" && s != "mcp") {
				bad(k, "must be server, short, none or mcp")
				continue
			}
			set.ToolPrefix = s
		case "disableProxyTool":
			if json.Unmarshal(v, &set.DisableProxyTool) != nil {
				bad(k, "must be true or false")
			}
		case "autoAuth":
			if json.Unmarshal(v, &set.AutoAuth) != nil {
				bad(k, "must be true or false")
			}
		case "trace":
			if json.Unmarshal(v, &set.Trace) != nil {
				bad(k, "must be true or false")
			}
		case "output":
			var o OutputLimits
			if strictDecode(v, &o) != nil || !o.valid() {
				bad(k, "must be an object with maxTextBytes, maxLines and maxDetailsBytes, positive integers")
				continue
			}
			set.Output = &o
		case "outputGuard":
			var off bool
			var g struct {
				MaxBytes        *int `json:"maxBytes"`
				MaxLines        *int `json:"maxLines"`
				DetailsMaxBytes *int `json:"detailsMaxBytes"`
			}
			switch {
			case json.Unmarshal(v, &off) == nil:
				set.OutputGuardOff = !off
				if !off {
					issues = append(issues, Issue{File: from[k], Field: "settings.outputGuard", Message: "is false: tool output reaches the model uncut and unbounded, and nothing is saved to a file (terminal controls are still removed)"})
				}
			case strictDecode(v, &g) == nil && (OutputLimits{g.MaxBytes, g.MaxLines, g.DetailsMaxBytes}).valid():
				o := OutputLimits{MaxTextBytes: g.MaxBytes, MaxLines: g.MaxLines, MaxDetailsBytes: g.DetailsMaxBytes}
				if set.Output == nil {
					set.Output = &o
				}
			default:
				bad(k, "must be true, false or an object with maxBytes, maxLines and detailsMaxBytes, positive integers")
			}
		default:
			if foreignSettings[k] {
				notices = append(notices, Issue{File: from[k], Field: "settings." + k, Message: "is not supported by mcprt (ignored)"})
				continue
			}
			msg := "unknown setting"
			if c := closest(k, knownSettings); c != "" {
				msg += " (did you mean " + c + "?)"
			}
			bad(k, msg)
		}
	}
	return set, issues, notices
}

var knownSettings = map[string]bool{"idleTimeout": true, "requestTimeoutMs": true, "npxInstallTimeoutMs": true, "directTools": true, "toolPrefix": true, "disableProxyTool": true, "output": true, "outputGuard": true, "autoAuth": true, "trace": true}

func (o OutputLimits) valid() bool {
	for _, p := range []*int{o.MaxTextBytes, o.MaxLines, o.MaxDetailsBytes} {
		if p != nil && *p <= 0 {
			return false
		}
	}
	return true
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
