package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// syntheticDocs makes n tools over 100 servers from a fixed vocabulary,
// deterministically: names of two or three verbs and nouns, descriptions of
// ten to thirty words.
func syntheticDocs(n int) []Doc {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "read", "write", "move", "copy", "open", "close", "run", "stop", "query", "fetch", "push", "pull", "merge", "sync"}
	nouns := []string{"file", "directory", "issue", "page", "user", "repository", "branch", "commit", "image", "table", "record", "message", "channel", "event", "task", "project", "document", "comment", "label", "workflow", "database", "bucket", "screenshot", "tab", "node", "graph", "entity", "relation", "secret", "token"}
	extra := []string{"the", "a", "with", "for", "from", "into", "returns", "given", "current", "remote", "local", "all", "by", "name", "id", "quickly", "safely", "optional", "filter", "options"}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	docs := make([]Doc, n)
	for i := range docs {
		name := pick(verbs) + "_" + pick(nouns)
		if r.IntN(2) == 0 {
			name += "_" + pick(nouns)
		}
		words := make([]string, 10+r.IntN(21))
		for j := range words {
			switch r.IntN(3) {
			case 0:
				words[j] = pick(verbs)
			case 1:
				words[j] = pick(nouns)
			default:
				words[j] = pick(extra)
			}
		}
		docs[i] = Doc{Server: fmt.Sprintf("server%02d", i%100), Name: fmt.Sprintf("%s_%d", name, i), Description: fmt.Sprint(words)}
	}
	return docs
}

var benchQueries = []string{"screenshot", "read file", "create issue", "search repository branch", "delete secret token", "list", "merge pull request comments", "graph entity", "xyzzy", "update_record", "get-page"}

// BenchmarkSearch10k ranks queries over a synthetic catalog of 10,000
// tools (the first page of 12, as the mcp tool asks) and reports the median and 99th-percentile time of one query:
//
//	go test ./catalog -run '^$' -bench Search10k -benchtime 2000x
func BenchmarkSearch10k(b *testing.B) {
	ix := NewIndex(syntheticDocs(10000))
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := benchQueries[i%len(benchQueries)]
		start := time.Now()
		ix.SearchTop(q, nil, 12)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkIndex10k builds the index of 10,000 tools (once per catalog
// change in the runtime).
func BenchmarkIndex10k(b *testing.B) {
	docs := syntheticDocs(10000)
	for i := 0; i < b.N; i++ {
		NewIndex(docs)
	}
}
