package config

import (
	"encoding/json"
	"sort"
	"strings"
)

// Masks shown instead of secret values.
const (
	// MaskSecret replaces a secret value (env and header values, bearer
	// tokens, client secrets, URL query strings).
	MaskSecret = "<secret>"
	// MaskCommand replaces a secret taken from a command ("!command").
	MaskCommand = "<secret from a command>"
)

// Shown is the effective configuration as "runtime config show" prints it:
// every field with the file it came from, secret values masked. It holds
// nothing secret, so it may be printed or logged.
type Shown struct {
	// Sources lists every place looked at, lowest precedence first.
	Sources []SourceFile `json:"sources"`
	// Servers are the effective servers.
	Servers []ShownServer `json:"servers"`
	// Settings are the merged settings; SettingsSources names their files.
	Settings        map[string]any    `json:"settings"`
	SettingsSources map[string]string `json:"settingsSources"`
	// Imports is the union of every file's imports.
	Imports []string `json:"imports"`
	// Issues and Notices are rendered one per line.
	Issues  []string `json:"issues"`
	Notices []string `json:"notices"`
}

// ShownServer is one server of Shown.
type ShownServer struct {
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
	// Config holds each field as written (before interpolation), with
	// secret values masked.
	Config map[string]any `json:"config"`
	// Sources maps each field of Config to the file it came from ("" for
	// in-memory configuration).
	Sources map[string]string `json:"sources"`
	// Problem says why the server cannot connect as configured, if so.
	Problem string `json:"problem,omitempty"`
	// Ignored lists what a host import left out of this server, one line
	// each ("field envFile (FILE): is specific to that host and ignored").
	Ignored []string `json:"ignored,omitempty"`
}

// Show renders an effective configuration for display.
func Show(eff *Effective) Shown {
	out := Shown{Sources: eff.Sources, Servers: []ShownServer{}, Imports: append([]string{}, eff.Imports...),
		Settings: map[string]any{}, SettingsSources: map[string]string{}, Issues: []string{}, Notices: []string{}}
	for _, s := range eff.Servers {
		shown := showServer(s)
		for _, n := range eff.Notices {
			if n.Server == s.Name && n.Field != "" {
				shown.Ignored = append(shown.Ignored, "field "+n.Field+" ("+displayPath(n.File)+"): "+n.Message)
			}
		}
		out.Servers = append(out.Servers, shown)
	}
	if b, err := json.Marshal(eff.Settings); err == nil {
		_ = json.Unmarshal(b, &out.Settings)
	}
	for k := range out.Settings {
		out.SettingsSources[k] = eff.SettingsProvenance[k]
	}
	for _, is := range eff.Issues {
		out.Issues = append(out.Issues, is.String())
	}
	for _, is := range eff.Notices {
		out.Notices = append(out.Notices, is.String())
	}
	return out
}

func showServer(s Server) ShownServer {
	shown := ShownServer{Name: s.Name, Disabled: s.Disabled, Config: map[string]any{}, Sources: map[string]string{}}
	masked := s.clone()
	masked.Name, masked.Source = "", ""
	masked.Env, masked.Headers = maskMap(masked.Env), maskMap(masked.Headers)
	if masked.BearerToken != "" {
		masked.BearerToken = mask(masked.BearerToken)
	}
	if masked.OAuth != nil && masked.OAuth.ClientSecret != "" {
		masked.OAuth.ClientSecret = mask(masked.OAuth.ClientSecret)
	}
	masked.URL = maskURL(masked.URL)
	if b, err := json.Marshal(masked); err == nil {
		_ = json.Unmarshal(b, &shown.Config)
	}
	for k := range shown.Config {
		shown.Sources[k] = s.Provenance[k]
	}
	if s.endpoint != nil {
		shown.Problem = s.endpoint.Problem
	}
	return shown
}

func mask(v string) string {
	if strings.HasPrefix(v, "!") && !strings.HasPrefix(v, "!!") {
		return MaskCommand
	}
	return MaskSecret
}

func maskMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = mask(v)
	}
	return out
}

// maskURL removes what of a URL may be a credential: user information and
// the query string (and a fragment). It works on the text as written, so
// variable references stay readable.
func maskURL(raw string) string {
	if raw == "" {
		return ""
	}
	out, query := raw, false
	if i := strings.IndexAny(out, "?#"); i >= 0 {
		query = out[i] == '?'
		out = out[:i]
	}
	if i := strings.Index(out, "://"); i >= 0 {
		rest := out[i+3:]
		host := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			host = rest[:j]
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			out = out[:i+3] + rest[at+1:]
		}
	}
	if query {
		out += "?" + MaskSecret
	}
	return out
}

// SortedFields returns a shown server's field names in a stable,
// readable order: endpoint first, then the rest alphabetically.
func (s ShownServer) SortedFields() []string {
	rank := map[string]int{"type": 1, "command": 2, "args": 3, "cwd": 4, "env": 5, "url": 6, "headers": 7, "socket": 8}
	keys := make([]string, 0, len(s.Config))
	for k := range s.Config {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank[keys[i]], rank[keys[j]]
		if ri == 0 {
			ri = 100
		}
		if rj == 0 {
			rj = 100
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}
