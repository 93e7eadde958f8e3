package config

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/BurntSushi/toml"
)

// codexServers reads the [mcp_servers.NAME] tables of a Codex config.toml,
// in file order.
func codexServers(data []byte) ([]hostServer, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("is not valid TOML (line %d, column %d)", pe.Position.Line, pe.Position.Col)
		}
		return nil, errors.New("is not valid TOML")
	}
	tables, ok := doc["mcp_servers"].(map[string]any)
	if !ok {
		if _, present := doc["mcp_servers"]; present {
			return nil, errors.New("its mcp_servers is not a table")
		}
		return nil, nil
	}
	var out []hostServer
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "mcp_servers" || seen[k[1]] {
			continue
		}
		seen[k[1]] = true
		fields, _ := tables[k[1]].(map[string]any)
		out = append(out, hostServer{name: k[1], fields: fields})
	}
	return out, nil
}

// translateCodex maps a Codex server table. Codex does not interpolate, so
// every string is literal (a "$" stays a "$", a leading "!" never runs a
// command); env_vars and env_http_headers, which name variables of the
// environment, become ${VAR} references.
func translateCodex(in map[string]any) (map[string]any, []string) {
	out := map[string]any{}
	var dropped []string
	env := map[string]any{}
	headers := map[string]any{}
	for k, v := range in {
		switch k {
		case "command", "cwd", "url":
			if s, ok := v.(string); ok {
				v = escapeDollars(s)
			}
			out[k] = v
		case "args":
			out[k] = mapStrings(stringList(v), escapeDollars)
		case "env":
			m, ok := stringMap(v).(map[string]any)
			if !ok {
				out[k] = v
				continue
			}
			for ek, ev := range m {
				env[ek] = literalSecret(ev)
			}
		case "env_vars":
			list, _ := v.([]any)
			for _, n := range list {
				if name, ok := n.(string); ok && isIdent(name) {
					if _, set := env[name]; !set {
						env[name] = "${" + name + "}"
					}
				} else {
					dropped = append(dropped, k)
				}
			}
		case "http_headers":
			if m, ok := stringMap(v).(map[string]any); ok {
				for hk, hv := range m {
					headers[hk] = literalSecret(hv)
				}
			} else {
				out["headers"] = v
			}
		case "env_http_headers":
			if m, ok := v.(map[string]any); ok {
				for hk, hv := range m {
					if name, ok := hv.(string); ok && isIdent(name) {
						headers[hk] = "${" + name + "}"
					} else {
						dropped = append(dropped, k)
					}
				}
			}
		case "bearer_token_env_var":
			out["bearerTokenEnv"] = v
		case "bearer_token":
			out["bearerToken"] = literalSecret(v)
		case "startup_timeout_sec":
			out["startupTimeoutMs"] = seconds(v)
		case "startup_timeout_ms":
			out["startupTimeoutMs"] = v
		case "tool_timeout_sec":
			out["requestTimeoutMs"] = seconds(v)
		case "enabled":
			if b, ok := v.(bool); ok && !b {
				out["disabled"] = true
			}
		case "enabled_tools":
			out["includeTools"] = v
		case "disabled_tools":
			out["excludeTools"] = v
		default:
			dropped = append(dropped, k)
		}
	}
	if len(env) > 0 {
		out["env"] = env
	}
	if len(headers) > 0 {
		out["headers"] = headers
	}
	return out, dropped
}

// literalSecret makes a host's literal secret value safe as ours: "$" is
// escaped and a leading "!" doubled.
func literalSecret(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	s = escapeDollars(s)
	if strings.HasPrefix(s, "!") {
		s = "!" + s
	}
	return s
}

func mapStrings(v any, f func(string) string) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	for i, x := range list {
		if s, ok := x.(string); ok {
			list[i] = f(s)
		}
	}
	return list
}

// seconds converts Codex's seconds (integer or float) to milliseconds.
func seconds(v any) any {
	switch t := v.(type) {
	case int64:
		return t * 1000
	case float64:
		return int64(math.Round(t * 1000))
	}
	return v
}
