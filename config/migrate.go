package config

import (
	"regexp"
	"sort"
	"sync"
)

// migrations explain fields other versions and other hosts write that this
// version does not take, and what to write instead.
var migrations = map[string]string{
	"timeoutMs":             "was renamed: use timeout (or requestTimeoutMs) for calls, and startupTimeoutMs and catalogTimeoutMs for the other deadlines",
	"approve":               "was removed: approvals belong to the host's permission hooks, which see every MCP call",
	"approveTools":          "is not supported: approvals belong to the host's permission hooks, which see every MCP call",
	"alwaysAllow":           "is another host's approval list and is not supported: approvals belong to the host's permission hooks",
	"autoApprove":           "is another host's approval list and is not supported: approvals belong to the host's permission hooks",
	"transport":             "is spelled type here (stdio, http, streamable-http or sse)",
	"serverUrl":             "is spelled url here",
	"httpUrl":               "is spelled url here",
	"environment":           "is spelled env here",
	"enabled":               "is not a field here: use disabled: true to turn a server off",
	"requestHeadersCommand": "was removed: give a header a value starting with ! to take it from a command",
	"headersHelper":         "is not supported: give a header a value starting with ! to take it from a command",
	"bearerTokenStore":      "is not supported: use bearerToken (which may start with ! to run a command) or bearerTokenEnv",
	"envFile":               "is not supported: list the variables in env (values may use ${VAR})",
	"workingDirectory":      "is spelled cwd here",
	"disabledTools":         "is spelled excludeTools here",
	"enabledTools":          "is spelled includeTools here",
	"idleTimeoutMs":         "is not a field: idleTimeout is in minutes",
	"lazy":                  "is not a field: use lifecycle (lazy, eager, keep-alive or lazy-keep-alive)",
}

// safeKey matches keys that diagnostics may name: plain field names
// (compiled on first use).
var safeKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.$-]{1,64}$`) })

// fieldLabel is how a diagnostic names a key: the key itself when it looks
// like a field name, else a placeholder, so a key that is really a value
// pasted in the wrong place is never echoed.
func fieldLabel(k string) string {
	if safeKey().MatchString(k) {
		return k
	}
	return "(a key that is not a field name)"
}

// unknownFieldMessage explains an unknown server field.
func unknownFieldMessage(k string) string {
	if m, ok := migrations[k]; ok {
		return m + "; the entry is not used until this is fixed"
	}
	if s := closest(k, knownFields); s != "" {
		return "unknown field (did you mean " + s + "?); the entry is not used until this is fixed"
	}
	return "unknown field; the entry is not used until this is fixed (see docs/config.md for the fields)"
}

// closest returns the known name nearest to k (edit distance at most 2),
// or "".
func closest(k string, known map[string]bool) string {
	if !safeKey().MatchString(k) {
		return ""
	}
	best, bestD := "", 3
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := Distance(lower(k), lower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// Distance is the Levenshtein distance of two short strings, in bytes:
// the did-you-mean of configuration fields and of the proxy tool's names.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
