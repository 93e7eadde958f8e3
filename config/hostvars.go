package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// errHostVar is why an entry using a variable only its host can resolve is
// not imported.
const errHostVar = "uses a variable only that host can resolve (an input, setting or command variable, or a file reference)"

// convertVars rewrites one host string into our template syntax.
func convertVars(s string, f hostFile) (string, string) {
	switch f.vars {
	case "shell":
		return s, "" // ${VAR} and ${VAR:-default}, as here
	case "vscode":
		return convertBraced(s, "${", func(inner string) (string, bool) {
			switch {
			case strings.HasPrefix(inner, "env:") && isIdent(inner[4:]):
				return "${" + inner[4:] + "}", true
			case inner == "userHome":
				return escapeDollars(f.home), f.home != ""
			case inner == "workspaceFolder" || inner == "cwd":
				return escapeDollars(f.workspace), true
			case inner == "workspaceFolderBasename":
				return escapeDollars(filepath.Base(f.workspace)), true
			case inner == "pathSeparator" || inner == "/":
				return "/", true
			case isIdent(inner):
				return "${" + inner + "}", true // ${VAR}, as Windsurf writes it
			}
			return "", false
		})
	case "opencode":
		return convertBraced(s, "{", func(inner string) (string, bool) {
			if strings.HasPrefix(inner, "env:") && isIdent(inner[4:]) {
				return "${" + inner[4:] + "}", true
			}
			return "", !strings.HasPrefix(inner, "file:")
		})
	}
	return escapeDollars(s), ""
}

// convertBraced rewrites the open...} references of s with conv; the text
// around them becomes literal. A reference conv rejects (ok false) makes
// the whole value unusable; one conv does not recognise at all (returns
// "", true) is kept as literal text.
func convertBraced(s, open string, conv func(inner string) (string, bool)) (string, string) {
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			b.WriteString(escapeDollars(s))
			return b.String(), ""
		}
		end := strings.IndexByte(s[i+len(open):], '}')
		if end < 0 {
			b.WriteString(escapeDollars(s))
			return b.String(), ""
		}
		inner := s[i+len(open) : i+len(open)+end]
		b.WriteString(escapeDollars(s[:i]))
		r, ok := conv(inner)
		switch {
		case !ok:
			return "", errHostVar
		case r == "" && open == "{":
			b.WriteString(escapeDollars(s[i : i+len(open)+end+1])) // not a reference
		default:
			b.WriteString(r)
		}
		s = s[i+len(open)+end+1:]
	}
}

// stringList converts a host's argument list, turning numbers and booleans
// into strings.
func stringList(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(list))
	for _, x := range list {
		out = append(out, scalarString(x))
	}
	return out
}

// stringMap converts a host's env or headers object: numbers and booleans
// become strings, null entries (VS Code's "unset") are dropped.
func stringMap(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if x != nil {
			out[k] = scalarString(x)
		}
	}
	return out
}

func scalarString(x any) any {
	switch t := x.(type) {
	case json.Number:
		return t.String()
	case bool:
		return fmt.Sprint(t)
	case int64, float64:
		return fmt.Sprint(t)
	}
	return x
}

// translateOpenCode maps an OpenCode V1 "mcp" entry: local servers'
// command array and environment, remote servers' url, headers and oauth,
// enabled and timeout. An entry may be partial (a project file that only
// sets enabled); it then merges over the user file's entry.
func translateOpenCode(in map[string]any) (map[string]any, []string, string) {
	out := map[string]any{}
	var dropped []string
	for k, v := range in {
		switch k {
		case "type":
			// local and remote follow from command or url.
			if t := fmt.Sprint(v); t != "local" && t != "remote" {
				dropped = append(dropped, k)
			}
		case "command":
			list, ok := stringList(v).([]any)
			if !ok || len(list) == 0 {
				out["command"] = v // reported by the strict check
				continue
			}
			// The array is the whole command line: a project entry's
			// ["oc-project"] has no arguments, and must not inherit the
			// user file's args when it merges over that entry.
			out["command"] = list[0]
			out["args"] = list[1:]
		case "environment":
			out["env"] = stringMap(v)
		case "url":
			out["url"] = v
		case "headers":
			out["headers"] = stringMap(v)
		case "enabled":
			if b, ok := v.(bool); ok {
				out["disabled"] = !b
			}
		case "timeout":
			out["catalogTimeoutMs"] = v
		case "oauth":
			o, ok := v.(map[string]any)
			if !ok {
				continue // false turns OAuth detection off: nothing to map
			}
			oauth := map[string]any{}
			for ok, ov := range o {
				switch ok {
				case "clientId", "clientSecret", "scope":
					oauth[ok] = ov
				default:
					dropped = append(dropped, "oauth."+ok)
				}
			}
			if s, ok := oauth["clientSecret"].(string); ok {
				if conv, why := convertVars(s, hostFile{vars: "opencode"}); why == "" {
					if strings.HasPrefix(conv, "!") {
						conv = "!" + conv
					}
					oauth["clientSecret"] = conv
				} else {
					return nil, nil, "field oauth.clientSecret " + why
				}
			}
			out["oauth"], out["auth"] = oauth, "oauth"
		default:
			dropped = append(dropped, k)
		}
	}
	return out, dropped, hostStrings(out, hostFile{vars: "opencode"})
}

// hostTypes maps the transport names hosts write to ours.
var hostTypes = map[string]string{"stdio": "stdio", "http": "http", "streamable-http": "streamable-http", "streamableHttp": "streamable-http", "sse": "sse"}

// translateJSONHost maps a Claude-style entry (Cursor, Claude Code, Claude
// Desktop, VS Code, Windsurf).
func translateJSONHost(in map[string]any, f hostFile) (map[string]any, []string, string) {
	out := map[string]any{}
	var dropped []string
	for k, v := range in {
		if r, ok := f.rename[k]; ok {
			k = r
		}
		switch k {
		case "command", "url", "cwd", "description":
			out[k] = v
		case "args":
			out[k] = stringList(v)
		case "disabledTools": // Windsurf: the tools it hides, by original name
			if list, ok := stringList(v).([]any); ok && len(list) > 0 {
				out["excludeTools"] = list
			}
		case "env", "headers":
			out[k] = stringMap(v)
		case "disabled":
			if b, ok := v.(bool); ok && b {
				out[k] = true
			}
		case "type":
			if t, ok := hostTypes[fmt.Sprint(v)]; ok {
				out[k] = t
			} else {
				dropped = append(dropped, k)
			}
		default:
			dropped = append(dropped, k)
		}
	}
	return out, dropped, hostStrings(out, f)
}

// hostStrings rewrites a translated entry's strings into our syntax. It
// returns why the entry cannot be imported, or "".
func hostStrings(out map[string]any, f hostFile) string {
	problem := ""
	conv := func(field, s string) string {
		r, why := convertVars(s, f)
		if why != "" && problem == "" {
			problem = "field " + field + " " + why
		}
		return r
	}
	for k, v := range out {
		switch t := v.(type) {
		case string:
			if templated[k] {
				out[k] = conv(k, t)
			}
		case []any:
			for i, s := range t {
				if str, ok := s.(string); ok {
					t[i] = conv(k, str)
				}
			}
		case map[string]any:
			for key, s := range t {
				if str, ok := s.(string); ok {
					str = conv(k, str)
					if secretFields[k] && strings.HasPrefix(str, "!") {
						str = "!" + str // a host's literal value never runs a command here
					}
					t[key] = str
				}
			}
		}
	}
	return problem
}
