package tools

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// Saved full results: when the output guard cuts a result, the whole raw
// result is written to a file in one per-user directory, which outlives the
// process (the preview names the file for the model or the person to open
// later). The directory is bounded: before each new file is written, files
// older than the age cap are removed, then the oldest files until the new
// one fits under the size cap. File names carry the time and 128 random
// bits and are created exclusively, so a removed file's path is never
// handed out again.
const (
	// DefaultResultsMaxBytes caps the total size of the saved results.
	DefaultResultsMaxBytes = 256 << 20
	// DefaultResultsMaxAge is how long a saved result is kept at most.
	DefaultResultsMaxAge = 7 * 24 * time.Hour
	resultPrefix         = "result-"
	resultSuffix         = ".json"
)

// DefaultResultDir is the saved results' directory when none is
// configured: <user cache directory>/mcprt/results ($XDG_CACHE_HOME or
// ~/.cache on Linux, ~/Library/Caches on macOS), else, without a home
// directory, mcprt-<uid>-results in the system temp directory.
func DefaultResultDir() string {
	if c, err := os.UserCacheDir(); err == nil && c != "" {
		return filepath.Join(c, "mcprt", "results")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("mcprt-%d-results", os.Getuid()))
}

// resultStore writes saved results; it is safe for concurrent use (and
// several processes may share the directory).
type resultStore struct {
	dir      string // "" for DefaultResultDir
	maxBytes int64
	maxAge   time.Duration
	clk      clock.Clock

	mu sync.Mutex // serialises this runtime's writes and pruning
}

func newResultStore(opts Options, clk clock.Clock) *resultStore {
	s := &resultStore{dir: opts.ResultDir, maxBytes: opts.ResultsMaxBytes, maxAge: opts.ResultsMaxAge, clk: clock.Or(clk)}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultResultsMaxBytes
	}
	if s.maxAge <= 0 {
		s.maxAge = DefaultResultsMaxAge
	}
	return s
}

// save writes raw to a new file (mode 0600) and returns its absolute path.
func (s *resultStore) save(raw []byte) (string, error) {
	if int64(len(raw)) > s.maxBytes {
		return "", fmt.Errorf("it is %d bytes, over the %d-byte cap on saved results", len(raw), s.maxBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, err := s.openDir()
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	defer root.Close()
	now := s.clk.Now()
	s.prune(root, int64(len(raw)), now)
	name := resultPrefix + now.UTC().Format("20060102T150405.000000000Z") + "-" + strings.ToLower(rand.Text()) + resultSuffix
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	_, werr := f.Write(raw)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = root.Remove(name)
		return "", fmt.Errorf("results directory: %w", err)
	}
	return filepath.Join(dir, name), nil
}

// openDir creates the directory (mode 0700) when missing and checks that
// it is a directory of this user's, not a symbolic link, and private.
func (s *resultStore) openDir() (string, error) {
	dir, configured := s.dir, s.dir != ""
	if !configured {
		dir = DefaultResultDir()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	stat := os.Lstat // the default place is not followed through a link
	if configured {
		stat = os.Stat // a configured one may be a link the user made
	}
	fi, err := stat(abs)
	if err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("results directory %s is not a directory", abs)
	}
	if ownedByOther(fi) {
		return "", fmt.Errorf("results directory %s belongs to another user", abs)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(abs, 0o700); err != nil {
			return "", fmt.Errorf("results directory: %w", err)
		}
	}
	return abs, nil
}

// savedResult is a file of the directory as pruning sees it.
type savedResult struct {
	name string
	size int64
	mod  time.Time
}

// prune removes the saved results older than the age cap, then the oldest
// until incoming more bytes fit under the size cap. Other files of the
// directory are left alone; a file another process removed meanwhile is
// skipped.
func (s *resultStore) prune(root *os.Root, incoming int64, now time.Time) {
	d, err := root.Open(".")
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil {
		return
	}
	var kept []savedResult
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), resultPrefix) || !strings.HasSuffix(e.Name(), resultSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if now.Sub(info.ModTime()) >= s.maxAge {
			_ = root.Remove(e.Name())
			continue
		}
		kept = append(kept, savedResult{e.Name(), info.Size(), info.ModTime()})
		total += info.Size()
	}
	slices.SortFunc(kept, func(a, b savedResult) int {
		return cmp.Or(a.mod.Compare(b.mod), strings.Compare(a.name, b.name))
	})
	for _, f := range kept {
		if total+incoming <= s.maxBytes {
			break
		}
		_ = root.Remove(f.name)
		total -= f.size
	}
}
