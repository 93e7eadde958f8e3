package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// The metadata cache: one JSON file, <agentDir>/mcp-cache.json, holding each
// server's last listed metadata under its identity hash, so that status,
// list, search, describe and direct tools work before (and without) any
// connection.
const (
	// CacheFileName is the cache file's name inside the agent directory.
	CacheFileName = "mcp-cache.json"
	// CacheVersion is the file format's version; a file of another version
	// is ignored (and replaced on the next write).
	CacheVersion = 1
	// CacheMaxAge is how long an entry stays valid.
	CacheMaxAge = 7 * 24 * time.Hour
	// maxCacheFile bounds what is read of the file.
	maxCacheFile = 256 << 20
)

// CacheFile is the cache file's content.
type CacheFile struct {
	Version int                     `json:"version"`
	Servers map[string]CachedServer `json:"servers"`
}

// CachedServer is one server's entry in the cache file.
type CachedServer struct {
	// ConfigHash is IdentityHash of the configuration the metadata was
	// listed under; an entry whose hash differs from the current one is
	// ignored.
	ConfigHash string `json:"configHash"`
	// CachedAt is when the metadata was listed, in Unix milliseconds.
	CachedAt int64 `json:"cachedAt"`
	Entry
}

// Valid reports whether c may be used for a server whose identity hash is
// hash, at time now: same hash, and listed less than CacheMaxAge ago.
func (c CachedServer) Valid(hash string, now time.Time) bool {
	if c.ConfigHash != hash {
		return false
	}
	age := now.Sub(time.UnixMilli(c.CachedAt))
	return age < CacheMaxAge && age > -time.Hour // a clock far behind the file is not trusted either
}

// CachedAtTime returns CachedAt as a time.
func (c CachedServer) CachedAtTime() time.Time { return time.UnixMilli(c.CachedAt) }

// ReadCache reads the cache file at path. A missing, unreadable, malformed
// or other-version file reads as empty: the cache is an optimisation, and
// a bad file is replaced on the next write. The error says why it was not
// used, for diagnostics; it never contains the file's content.
func ReadCache(path string) (*CacheFile, error) {
	empty := &CacheFile{Version: CacheVersion, Servers: map[string]CachedServer{}}
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return empty, nil
		}
		return empty, fmt.Errorf("catalog: cache %s cannot be read", path)
	}
	defer fh.Close()
	// One buffer of the file's size (io.ReadAll would grow one from 512
	// bytes, allocating twice the file: memory a short-lived process pays
	// for in page faults).
	size := int64(0)
	if st, err := fh.Stat(); err == nil && st.Size() <= maxCacheFile {
		size = st.Size()
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(fh, maxCacheFile+1))
	data := buf.Bytes()
	if err != nil || len(data) > maxCacheFile {
		return empty, fmt.Errorf("catalog: cache %s cannot be read or is too large", path)
	}
	var f CacheFile
	if err := json.Unmarshal(data, &f); err != nil {
		return empty, fmt.Errorf("catalog: cache %s is not valid JSON; it will be rewritten", path)
	}
	if f.Version != CacheVersion {
		return empty, fmt.Errorf("catalog: cache %s has version %d, not %d; it will be rewritten", path, f.Version, CacheVersion)
	}
	if f.Servers == nil {
		f.Servers = map[string]CachedServer{}
	}
	return &f, nil
}

// Lookup returns the entry of server when it is valid for hash at now.
func (f *CacheFile) Lookup(server, hash string, now time.Time) (CachedServer, bool) {
	c, ok := f.Servers[server]
	if !ok || !c.Valid(hash, now) {
		return CachedServer{}, false
	}
	return c, true
}

// WriteCache stores one server's metadata in the cache file at path. It
// takes an exclusive lock on path+".lock", re-reads the file, replaces only
// that server's entry (dropping entries past CacheMaxAge), writes a
// temporary file beside it and renames it over the old one, so concurrent
// writers (other runtimes, other processes) each keep their servers and a
// reader never sees a half-written file. The directory is created with mode
// 0700 and the file is written with mode 0600. The lock file is opened with
// O_NOFOLLOW: a symbolic link in its place is refused with a clear error,
// never followed (another user could point it at a file of ours).
func WriteCache(path, server, hash string, e Entry, now time.Time) error {
	return updateCache(path, now, func(f *CacheFile) {
		f.Servers[server] = CachedServer{ConfigHash: hash, CachedAt: now.UnixMilli(), Entry: e}
	})
}

// updateCache runs change on the current file under the lock and writes the
// result atomically.
func updateCache(path string, now time.Time, change func(*CacheFile)) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("catalog: cannot create the cache directory %s", dir)
	}
	if fi, err := os.Lstat(path + ".lock"); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("catalog: the cache lock file %s is a symbolic link; refusing to follow it (remove it to write the cache)", path+".lock")
	}
	lock := flock.New(path+".lock",
		flock.SetFlag(os.O_CREATE|os.O_RDWR|oNoFollow), flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		if isSymlinkRefusal(err) {
			return fmt.Errorf("catalog: the cache lock file %s is a symbolic link; refusing to follow it (remove it to write the cache)", path+".lock")
		}
		return fmt.Errorf("catalog: cannot lock the cache %s: %w", path, err)
	}
	defer lock.Unlock()
	f, _ := ReadCache(path)
	for name, c := range f.Servers {
		if now.Sub(c.CachedAtTime()) >= CacheMaxAge {
			delete(f.Servers, name)
		}
	}
	change(f)
	f.Version = CacheVersion
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("catalog: encode the cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".mcp-cache-*.tmp")
	if err != nil {
		return fmt.Errorf("catalog: cannot write in %s", dir)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(name)
		return fmt.Errorf("catalog: write the cache: %w", err)
	}
	if err := os.Chmod(name, 0o600); err != nil {
		os.Remove(name)
		return fmt.Errorf("catalog: write the cache: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("catalog: replace the cache: %w", err)
	}
	return nil
}
