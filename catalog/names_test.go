package catalog

import (
	"fmt"
	"strings"
	"testing"
)

func TestDirectNames(t *testing.T) {
	for _, c := range []struct{ server, mode, tool, want string }{
		{"github", PrefixServer, "create_issue", "github_create_issue"},
		{"chrome-devtools-mcp", PrefixShort, "take.screenshot", "chrome-devtools_take_screenshot"},
		{"chrome-devtools-mcp", PrefixServer, "take_screenshot", "chrome-devtools-mcp_take_screenshot"},
		{"x", PrefixNone, "echo", "echo"},
		{"my.srv", PrefixMCP, "echo", "mcp__my_srv_echo"},
		{"s", PrefixServer, "naïve tool", "s_na_ve_tool"},
	} {
		if got, _ := DirectName(c.server, c.mode, c.tool); got != c.want || !ValidToolName(got) {
			t.Errorf("DirectName(%q, %s, %q) = %q, want %q", c.server, c.mode, c.tool, got, c.want)
		}
	}
	long := strings.Repeat("a", 70)
	if got, altered := DirectName("s", PrefixServer, long); len(got) != 64 || !altered {
		t.Errorf("long name: %q %v", got, altered)
	}
}

func TestAssignNamesCollisions(t *testing.T) {
	mk := func(server, tool, mode string) Candidate {
		n, alt := DirectName(server, mode, tool)
		return Candidate{Server: server, Tool: tool, Name: n, Altered: alt}
	}
	long := strings.Repeat("b", 70)
	cands := []Candidate{
		mk("s", "a.b", PrefixServer),    // s_a_b (only '.' folded: not altered)
		mk("s", "a b", PrefixServer),    // s_a_b (sanitized: altered, gets a hash)
		mk("s", long+"1", PrefixServer), // cut: collides with the next one
		mk("s", long+"2", PrefixServer),
		mk("t", "read", PrefixNone),   // a host tool
		mk("u", "search", PrefixNone), // the first of two unaltered equal names wins
		mk("v", "search", PrefixNone),
	}
	named, skipped := AssignNames(cands, map[string]string{"read": `the host's tool "read"`, "mcp": "the proxy tool"})
	var got []string
	for _, c := range named {
		if !ValidToolName(c.Name) {
			t.Errorf("invalid name %q", c.Name)
		}
		got = append(got, c.Server+"/"+c.Tool[:min(len(c.Tool), 4)]+"="+c.Name[:min(len(c.Name), 12)]+fmt.Sprint(len(c.Name)))
	}
	if len(named) != 5 || named[0].Name != "s_a_b" || !strings.HasPrefix(named[1].Name, "s_a_b_") || named[2].Name == named[3].Name || len(named[2].Name) != 64 {
		t.Fatalf("named: %v", got)
	}
	again, _ := AssignNames(cands, map[string]string{"read": "x"})
	if again[1].Name != named[1].Name || again[2].Name != named[2].Name {
		t.Fatal("hash suffixes are not deterministic")
	}
	if len(skipped) != 2 || skipped[0].Tool != "read" || skipped[1].Server != "v" || !strings.Contains(skipped[1].Reason, "u/search") {
		t.Fatalf("skipped: %+v", skipped)
	}
}

func TestGlobAndExposed(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{{"get_*", "get_file", true}, {"get_*", "set_file", false}, {"*", "", true}, {"a?c", "abc", true}, {"a?c", "abbc", false}, {"*file*", "read_file_x", true}} {
		if Glob(c.p, c.s) != c.ok {
			t.Errorf("Glob(%q, %q) != %v", c.p, c.s, c.ok)
		}
	}
	if !Exposed([]string{"get_*", "figma_x"}, nil, "x", "figma_x") || Exposed([]string{"get_*"}, nil, "set", "srv_set") {
		t.Fatal("include")
	}
	if Exposed([]string{"get_*"}, []string{"get_secret"}, "get_secret") || !Exposed(nil, []string{"read_*"}, "echo") || Exposed(nil, []string{"read_*"}, "x", "", "read_doc") {
		t.Fatal("exclude")
	}
}
