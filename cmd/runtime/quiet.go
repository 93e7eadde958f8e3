package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
)

// importFilter keeps warnings about other hosts' files (the imports) from
// repeating on every command, in every directory: each is printed once,
// the first time a command meets it, and again only if it changes (a
// different text is a different warning). What was printed is remembered
// in the agent directory as hashes, one per line. Warnings about mcprt's
// own files are always printed; `runtime config show` lists everything.
type importFilter struct {
	opts mcprt.Options
	once sync.Once // loads quiet and fresh at the first warning

	mu        sync.Mutex
	quiet     map[string]bool // import warnings printed before: suppressed
	fresh     map[string]bool // import warnings to print now
	announced bool
}

// importWarningsFile remembers the import warnings already printed.
const importWarningsFile = "import-warnings-seen"

// maxSeenWarnings bounds that file.
const maxSeenWarnings = 512

func warningHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// newImportFilter returns the filter of a runtime built from o (nil for an
// explicit configuration, which imports nothing). It reads nothing until
// the first warning: a command without warnings pays nothing for it.
func newImportFilter(o mcprt.Options) *importFilter {
	if o.Config != nil || o.ConfigPath != "" {
		return nil
	}
	return &importFilter{opts: o, quiet: map[string]bool{}, fresh: map[string]bool{}}
}

// load finds the configuration's import warnings and decides which this
// command prints: those never printed before.
func (f *importFilter) load() {
	src := mcprt.ConfigSources(f.opts)
	eff, err := config.Load(src)
	if err != nil || src.AgentDir == "" {
		return
	}
	imported := map[string]bool{}
	for _, s := range eff.Sources {
		if strings.HasPrefix(s.Scope, "import:") {
			imported[s.Path] = true
		}
	}
	path := filepath.Join(src.AgentDir, importWarningsFile)
	var seen []string
	if b, err := os.ReadFile(path); err == nil {
		seen = strings.Fields(string(b))
	}
	known := map[string]bool{}
	for _, h := range seen {
		known[h] = true
	}
	for _, is := range eff.Issues {
		if !imported[is.File] {
			continue
		}
		text := is.String()
		if h := warningHash(text); known[h] {
			f.quiet[text] = true
		} else {
			f.fresh[text] = true
			known[h] = true
			seen = append(seen, h)
		}
	}
	if len(f.fresh) > 0 {
		if len(seen) > maxSeenWarnings {
			seen = seen[len(seen)-maxSeenWarnings:]
		}
		_ = writeFileAtomic(path, []byte(strings.Join(seen, "\n")+"\n")) // at worst they print again
	}
}

// filter tells whether a notice is printed, printing the announcement
// before the first import warning.
func (f *importFilter) filter(h cliHost, text string) bool {
	if f == nil {
		return true
	}
	f.once.Do(f.load)
	switch {
	case f.quiet[text]:
		return false
	case !f.fresh[text]:
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.announced {
		f.announced = true
		fmt.Fprintln(h.w, "runtime: warnings about other hosts' files, each shown once (`runtime config show` lists them):")
	}
	return true
}

// host is the CLI's host for a runtime built from o.
func (g *globals) host(o mcprt.Options) cliHost {
	h := cliHost{w: g.stderr, imports: newImportFilter(o)}
	if drawsProgress(g.stderr) {
		h.progress = &installProgress{}
	}
	return h
}
