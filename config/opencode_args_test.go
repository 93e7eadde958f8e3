package config

import (
	"path/filepath"
	"testing"
)

// An OpenCode command array is the whole command line: a project entry
// ["oc-project"] merges over the user file's entry without inheriting its
// arguments (issue 19).
func TestOpenCodeCommandReplacesArgs(t *testing.T) {
	w := hostWorld(t, "opencode")
	write(t, filepath.Join(w.work, "opencode.jsonc"), `{"mcp":{"mcp_everything":{"type":"local","command":["oc-project"]}}}`)
	eff := w.load(t)
	s, ok := eff.Server("mcp_everything")
	if !ok {
		t.Fatalf("no mcp_everything: %s", issuesText(eff.Issues))
	}
	if ep := s.Endpoint(); ep.Command != "oc-project" || len(ep.Args) != 0 {
		t.Fatalf("command %q args %q, want oc-project and no arguments", ep.Command, ep.Args)
	}
}
