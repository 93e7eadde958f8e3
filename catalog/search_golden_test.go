package catalog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// goldenCase is one query of testdata/search_golden.txt.
type goldenCase struct {
	line   int
	query  string
	server string
	checks []string
}

func loadGoldenCorpus(t *testing.T) []Doc {
	t.Helper()
	files, err := filepath.Glob("testdata/servers/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("want captured tools/list of at least five servers, found %d", len(files))
	}
	sort.Strings(files)
	var docs []Doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Server string            `json:"server"`
			Tools  []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range ParseTools(s.Tools) {
			docs = append(docs, Doc{Server: s.Server, Name: tool.Name, Description: tool.Description})
		}
	}
	return docs
}

func loadGoldenCases(t *testing.T) []goldenCase {
	t.Helper()
	fh, err := os.Open("testdata/search_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "query:"):
			cases = append(cases, goldenCase{line: n, query: strings.TrimSpace(strings.TrimPrefix(line, "query:"))})
		case len(cases) == 0:
			t.Fatalf("line %d: expectation before any query", n)
		case strings.HasPrefix(line, "server:"):
			cases[len(cases)-1].server = strings.TrimSpace(strings.TrimPrefix(line, "server:"))
		default:
			cases[len(cases)-1].checks = append(cases[len(cases)-1].checks, line)
		}
	}
	return cases
}

// TestSearchGoldens ranks the hand-written queries over the real tool lists
// of seven published servers. The expectations were written before the
// ranker and are never regenerated; there is deliberately no rewrite flag.
func TestSearchGoldens(t *testing.T) {
	docs := loadGoldenCorpus(t)
	ix := NewIndex(docs)
	cases := loadGoldenCases(t)
	if len(cases) < 30 {
		t.Fatalf("only %d golden queries; the issue asks for at least 30", len(cases))
	}
	for _, c := range cases {
		var keep func(int) bool
		if c.server != "" {
			keep = func(i int) bool { return docs[i].Server == c.server }
		}
		hits := ix.Search(c.query, keep)
		got := make([]string, len(hits))
		for i, h := range hits {
			got[i] = docs[h.Doc].Server + "/" + docs[h.Doc].Name
		}
		for _, chk := range c.checks {
			if err := checkGolden(chk, got); err != nil {
				t.Errorf("line %d, query %q: %s: %v\n  got: %s", c.line, c.query, chk, err, strings.Join(got[:min(len(got), 10)], ", "))
			}
		}
	}
}

func checkGolden(chk string, got []string) error {
	pos := func(name string) int {
		for i, g := range got {
			if g == name {
				return i
			}
		}
		return -1
	}
	list := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			out = append(out, strings.TrimSpace(p))
		}
		return out
	}
	switch {
	case chk == "none":
		if len(got) != 0 {
			return fmt.Errorf("want no result, got %d", len(got))
		}
	case strings.HasPrefix(chk, "first:"):
		want := strings.TrimSpace(strings.TrimPrefix(chk, "first:"))
		if len(got) == 0 || got[0] != want {
			return fmt.Errorf("not first (position %d)", pos(want)+1)
		}
	case strings.HasPrefix(chk, "absent:"):
		for _, w := range list(strings.TrimPrefix(chk, "absent:")) {
			if p := pos(w); p >= 0 {
				return fmt.Errorf("%s is result %d", w, p+1)
			}
		}
	case strings.HasPrefix(chk, "top "):
		head, rest, ok := strings.Cut(strings.TrimPrefix(chk, "top "), ":")
		n, err := strconv.Atoi(strings.TrimSpace(head))
		if !ok || err != nil {
			return fmt.Errorf("malformed expectation")
		}
		for _, w := range list(rest) {
			if p := pos(w); p < 0 || p >= n {
				return fmt.Errorf("%s is at position %d", w, p+1)
			}
		}
	default:
		return fmt.Errorf("unknown expectation")
	}
	return nil
}
