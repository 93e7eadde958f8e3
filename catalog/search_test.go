package catalog

import (
	"fmt"
	"regexp"
	"testing"
)

func names(ix *Index, hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = ix.Doc(h.Doc).Server + "/" + ix.Doc(h.Doc).Name
	}
	return out
}

func TestSearchCoverageRule(t *testing.T) {
	ix := NewIndex([]Doc{
		{Server: "s", Name: "alpha", Description: "red green"},
		{Server: "s", Name: "beta", Description: "red blue"},
		{Server: "s", Name: "gamma", Description: "red green blue"},
		{Server: "s", Name: "delta", Description: "yellow"},
	})
	// Two words: both must match (no OR).
	if got := names(ix, ix.Search("red green", nil)); len(got) != 2 || got[0] != "s/alpha" && got[0] != "s/gamma" {
		t.Fatalf("red green: %v", got)
	}
	// Five words: 60 % (3 of 5) must match.
	if got := names(ix, ix.Search("red green blue purple orange", nil)); len(got) != 1 || got[0] != "s/gamma" {
		t.Fatalf("five words: %v", got)
	}
	if got := ix.Search("purple", nil); len(got) != 0 {
		t.Fatalf("purple: %v", got)
	}
}

func TestSearchNamesAndTies(t *testing.T) {
	ix := NewIndex([]Doc{
		{Server: "b", Name: "resolve-library-id"},
		{Server: "a", Name: "same"},
		{Server: "c", Name: "same"},
		{Server: "a", Name: "sequentialthinking"},
		{Server: "a", Name: "getFileInfo", Description: "JavaScript"},
	})
	for _, q := range []string{"resolve_library_id", "resolve-library-id", "RESOLVE library ID", "b_resolve_library_id"} {
		if got := names(ix, ix.Search(q, nil)); len(got) == 0 || got[0] != "b/resolve-library-id" {
			t.Errorf("%q: %v", q, got)
		}
	}
	if got := names(ix, ix.Search("same", nil)); fmt.Sprint(got) != "[a/same c/same]" {
		t.Errorf("tie: %v", got)
	}
	if got := names(ix, ix.Search("thinking", nil)); fmt.Sprint(got) != "[a/sequentialthinking]" {
		t.Errorf("substring of a name: %v", got)
	}
	for _, q := range []string{"file info", "javascript", "java script", "get file information"} {
		if got := names(ix, ix.Search(q, nil)); fmt.Sprint(got) != "[a/getFileInfo]" {
			t.Errorf("%q: %v", q, got)
		}
	}
	for i := 0; i < 5; i++ { // deterministic
		if got := names(ix, ix.Search("a", nil)); fmt.Sprint(got) != fmt.Sprint(names(ix, ix.Search("a", nil))) {
			t.Fatal("order changed between runs")
		}
	}
	re := regexp.MustCompile(`^s.*e$`)
	if got := names(ix, ix.Regex(re, nil)); fmt.Sprint(got) != "[a/same c/same]" {
		t.Errorf("regex: %v", got)
	}
}

func TestTokensAndStem(t *testing.T) {
	if got := fmt.Sprint(Tokens("get_file-info.v2 readMediaFile")); got != "[get file info v2 read media file]" {
		t.Fatal(got)
	}
	for in, want := range map[string]string{"files": "file", "repositories": "repository", "docs": "documentation",
		"thinking": "think", "class": "class", "status": "status", "process": "process"} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}
