package catalog

import (
	"testing"

	"github.com/mcprt/mcprt/config"
)

// The tool prefix docs/config.md documents (config.ToolPrefix) is the one
// direct tools get.
func TestDirectNamesUseTheDocumentedServerPrefix(t *testing.T) {
	for _, server := range []string{"GitHub", "Context7", "my server", "my.server", "@scope/pkg", "Café", "org/repo~1"} {
		got, _ := DirectName(server, PrefixServer, "search")
		if want := config.ToolPrefix(server) + "_search"; got != want {
			t.Errorf("server %q: direct name %q, the documented prefix gives %q", server, got, want)
		}
	}
}
