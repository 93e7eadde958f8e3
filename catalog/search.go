package catalog

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Doc is one searchable tool.
type Doc struct {
	Server      string
	Name        string
	Description string
	// Keywords are the server's searchKeywords (and any others the caller
	// adds); they are matched like the description, with a higher weight.
	Keywords []string
}

// Hit is one search result: the index of its Doc and its score.
type Hit struct {
	Doc   int
	Score float64
}

// Fields a term can occur in, and their weights in the ranking. A word in
// a tool's name says far more about it than the same word in a paragraph
// of its description.
const (
	fieldName = iota
	fieldServer
	fieldKeywords
	fieldDescription
	numFields
)

var fieldWeight = [numFields]float64{fieldName: 3, fieldServer: 1.5, fieldKeywords: 1.5, fieldDescription: 1}

// BM25 parameters (the usual ones).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Boosts on top of BM25 for how the whole query meets the tool's name.
const (
	boostExactName  = 100 // the query is the tool's name (or server_name), '-' and '_' alike
	boostNamePrefix = 20  // the tool's name starts with the query
	boostNameHas    = 10  // the tool's name contains the query
	boostPhrase     = 5   // the query's words appear in this order in the name or description
	prefixFactor    = 0.5 // a word that is only a prefix of a term counts half
)

// posting is one document's occurrences of one term.
type posting struct {
	doc int32
	tf  [numFields]uint16
}

// Index is an immutable BM25 index over tools. Build it once per catalog
// snapshot with NewIndex; Search and Regex are safe for concurrent use.
type Index struct {
	docs     []Doc
	terms    []string             // sorted, for prefix lookups
	postings map[string][]posting // stemmed term → documents, in document order
	norm     [][numFields]float64 // per document and field: BM25's length normalisation
	pool     sync.Pool            // *scratch
	// normName is NormalizeName(Name); normFull is NormalizeName(Server_Name);
	// phraseText is " name words | description words " for phrase matching.
	normName, normFull, phraseText []string
}

// NewIndex builds the index. Docs are referred to by their position.
func NewIndex(docs []Doc) *Index {
	ix := &Index{docs: docs, postings: map[string][]posting{}, norm: make([][numFields]float64, len(docs)),
		normName: make([]string, len(docs)), normFull: make([]string, len(docs)), phraseText: make([]string, len(docs))}
	var total [numFields]float64
	lens := make([][numFields]int, len(docs))
	counts := map[string]*posting{}
	var order []string
	for i, d := range docs {
		fields := [numFields][]string{
			fieldName: indexTokens(d.Name), fieldServer: indexTokens(d.Server),
			fieldKeywords: indexTokens(strings.Join(d.Keywords, " ")), fieldDescription: indexTokens(d.Description),
		}
		clear(counts)
		order = order[:0]
		for f, words := range fields {
			lens[i][f] = len(words)
			total[f] += float64(len(words))
			for _, w := range words {
				t := Stem(w)
				p := counts[t]
				if p == nil {
					p = &posting{doc: int32(i)}
					counts[t] = p
					order = append(order, t)
				}
				if p.tf[f] < math.MaxUint16 {
					p.tf[f]++
				}
			}
		}
		for _, t := range order {
			ix.postings[t] = append(ix.postings[t], *counts[t])
		}
		ix.normName[i] = NormalizeName(d.Name)
		ix.normFull[i] = NormalizeName(d.Server + "_" + d.Name)
		ix.phraseText[i] = " " + strings.Join(stems(fields[fieldName]), " ") + " | " + strings.Join(stems(fields[fieldDescription]), " ") + " "
	}
	for i := range docs {
		for f := range total {
			avg := max(total[f]/float64(len(docs)), 1)
			ix.norm[i][f] = 1 - bm25B + bm25B*float64(lens[i][f])/avg
		}
	}
	ix.terms = make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		ix.terms = append(ix.terms, t)
	}
	sort.Strings(ix.terms)
	return ix
}

func stems(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Stem(w)
	}
	return out
}

// Len returns the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Doc returns document i.
func (ix *Index) Doc(i int) Doc { return ix.docs[i] }

// QueryWords returns the words a query is matched by: its tokens, stemmed,
// without duplicates, and without stopwords unless nothing else is left.
func QueryWords(q string) []string {
	var words, all []string
	seen := map[string]bool{}
	for _, w := range Tokens(q) {
		s := Stem(w)
		if seen[s] {
			continue
		}
		seen[s] = true
		all = append(all, s)
		if !stopwords[w] {
			words = append(words, s)
		}
	}
	if len(words) == 0 {
		return all
	}
	return words
}

// needed returns how many of n query words a tool must match: every one of
// up to two words (unless the query matched as a phrase), and at least 60 %
// of longer queries.
func needed(n int) int {
	if n <= 2 {
		return n
	}
	return int(math.Ceil(0.6 * float64(n)))
}

// Search ranks the tools that match q: BM25 over name, server, keywords and
// description (weighted in that order), plus boosts when the whole query is,
// starts or is contained in the tool's name, or appears as a phrase. keep,
// when not nil, selects the documents that may appear. Results are ordered
// by score, then by tool name, then by server: the same query over the same
// catalog always gives the same order.
func (ix *Index) Search(q string, keep func(doc int) bool) []Hit {
	hits, _ := ix.SearchTop(q, keep, -1)
	return hits
}

// scratch is one search's working memory, dense over the documents and
// reused across searches (only the touched entries are reset).
type scratch struct {
	score   []float64
	best    []float64
	matched []uint64 // bit i: query word i matched
	touched []int32  // documents with any match, in first-match order
	cur     []int32  // documents the current word matched
}

// maxQueryWords bounds the words of one query (one bit each in matched).
const maxQueryWords = 64

// SearchTop is Search returning only the first n results (all when n < 0)
// and the total number of matches. Selecting the first n costs far less
// than ordering every match when a query matches thousands of tools.
func (ix *Index) SearchTop(q string, keep func(doc int) bool, n int) ([]Hit, int) {
	words := QueryWords(q)
	if len(words) > maxQueryWords {
		words = words[:maxQueryWords]
	}
	if len(words) == 0 || len(ix.docs) == 0 {
		return nil, 0
	}
	sc := ix.scratch()
	defer ix.release(sc)
	nd := float64(len(ix.docs))
	for wi, w := range words {
		add := func(term string, factor float64) {
			ps := ix.postings[term]
			idf := math.Log(1 + (nd-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				s := 0.0
				norm := &ix.norm[p.doc]
				for f := 0; f < numFields; f++ {
					if p.tf[f] != 0 {
						tf := float64(p.tf[f])
						s += fieldWeight[f] * tf * (bm25K1 + 1) / (tf + bm25K1*norm[f])
					}
				}
				if s *= idf * factor; s > sc.best[p.doc] {
					if sc.best[p.doc] == 0 {
						sc.cur = append(sc.cur, p.doc)
					}
					sc.best[p.doc] = s
				}
			}
		}
		add(w, 1)
		if len(w) >= 3 {
			i := sort.SearchStrings(ix.terms, w)
			for ; i < len(ix.terms) && strings.HasPrefix(ix.terms[i], w); i++ {
				if ix.terms[i] != w {
					add(ix.terms[i], prefixFactor)
				}
			}
		}
		for _, d := range sc.cur {
			if sc.matched[d] == 0 && sc.score[d] == 0 {
				sc.touched = append(sc.touched, d)
			}
			sc.score[d] += sc.best[d]
			sc.matched[d] |= 1 << wi
			sc.best[d] = 0
		}
		sc.cur = sc.cur[:0]
	}
	normQ := NormalizeName(strings.Join(Tokens(q), "_"))
	phrase := " " + strings.Join(words, " ") + " "
	need := needed(len(words))
	// A name that contains a one-word query matches even when no word of it
	// does (e.g. "thinking" in "sequentialthinking").
	if len(words) == 1 && len(normQ) >= 3 {
		for i, name := range ix.normName {
			if sc.matched[i] == 0 && sc.score[i] == 0 && strings.Contains(name, normQ) {
				sc.touched = append(sc.touched, int32(i))
				sc.matched[i] = 1 << 63 // seen; counts as a phrase below
			}
		}
	}
	hits := make([]Hit, 0, len(sc.touched))
	for _, d := range sc.touched {
		if keep != nil && !keep(int(d)) {
			continue
		}
		s := sc.score[d]
		name, full := ix.normName[d], ix.normFull[d]
		// A phrase implies every word matched: only then is it looked for.
		all := popcount(sc.matched[d]&^(1<<63)) == len(words)
		isPhrase := len(words) > 1 && all && strings.Contains(ix.phraseText[d], phrase)
		switch {
		case name == normQ || full == normQ:
			s += boostExactName
			isPhrase = true
		case strings.HasPrefix(name, normQ):
			s += boostNamePrefix
			isPhrase = true
		case strings.Contains(name, normQ) || strings.Contains(full, normQ):
			s += boostNameHas
			isPhrase = true
		}
		if isPhrase {
			s += boostPhrase
		}
		if !isPhrase && popcount(sc.matched[d]&^(1<<63)) < need {
			continue
		}
		hits = append(hits, Hit{Doc: int(d), Score: s})
	}
	return ix.top(hits, n), len(hits)
}

// top orders the first n hits (all when n < 0 or n >= len(hits)) and
// returns them.
func (ix *Index) top(hits []Hit, n int) []Hit {
	if n < 0 || n >= len(hits) {
		sort.Slice(hits, func(i, j int) bool { return ix.less(hits[i], hits[j]) })
		return hits
	}
	// Keep the n best in a heap whose root is the worst of them.
	h := hits[:0:0]
	worse := func(i, j int) bool { return ix.less(h[j], h[i]) }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && worse(c+1, c) {
				c++
			}
			if !worse(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for _, x := range hits {
		switch {
		case len(h) < n:
			h = append(h, x)
			for i := len(h) - 1; i > 0 && worse(i, (i-1)/2); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case n > 0 && ix.less(x, h[0]):
			h[0] = x
			down(0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return ix.less(h[i], h[j]) })
	return h
}

func (ix *Index) scratch() *scratch {
	if sc, ok := ix.pool.Get().(*scratch); ok {
		return sc
	}
	n := len(ix.docs)
	return &scratch{score: make([]float64, n), best: make([]float64, n), matched: make([]uint64, n)}
}

func (ix *Index) release(sc *scratch) {
	for _, d := range sc.touched {
		sc.score[d], sc.matched[d] = 0, 0
	}
	sc.touched = sc.touched[:0]
	ix.pool.Put(sc)
}

func (ix *Index) less(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	da, db := ix.docs[a.Doc], ix.docs[b.Doc]
	if da.Name != db.Name {
		return da.Name < db.Name
	}
	return da.Server < db.Server
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// MaxRegexLen bounds a regular-expression search. Go's regexp (RE2) runs in
// time linear in its input, so no pattern can blow up; the cap only keeps
// patterns to a sensible size.
const MaxRegexLen = 256

// Regex returns the tools whose name, server_name or description the
// pattern matches, ordered by name then server (not ranked).
func (ix *Index) Regex(re *regexp.Regexp, keep func(doc int) bool) []Hit {
	var hits []Hit
	for i, d := range ix.docs {
		if keep != nil && !keep(i) {
			continue
		}
		if re.MatchString(d.Name) || re.MatchString(d.Server+"_"+d.Name) || re.MatchString(d.Description) {
			hits = append(hits, Hit{Doc: i})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return ix.less(hits[i], hits[j]) })
	return hits
}
