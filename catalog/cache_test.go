package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
)

// envWriter turns the test binary into a cache writer process:
// "PATH SERVER N" writes N versions of SERVER's entry.
const envWriter = "MCPRT_TEST_CACHE_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envWriter); spec != "" {
		os.Exit(writerMain(spec))
	}
	os.Exit(m.Run())
}

func writerMain(spec string) int {
	f := strings.Fields(spec)
	n, _ := strconv.Atoi(f[2])
	now := time.Unix(1_800_000_000, 0)
	for i := 0; i < n; i++ {
		e := Entry{Tools: []Tool{{Name: fmt.Sprintf("%s_tool_%d", f[1], i)}}, Instructions: strings.Repeat("x", 2000)}
		if err := WriteCache(f[0], f[1], "hash-"+f[1], e, now); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

var epoch = time.Unix(1_800_000_000, 0)

func TestCacheRoundTripAndValidity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent", CacheFileName)
	f, err := ReadCache(path)
	if err != nil || len(f.Servers) != 0 {
		t.Fatalf("missing file: %v %v", f, err)
	}
	e := Entry{Tools: ParseTools([]json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}),
		Resources: []Resource{{URI: "mem://a", Name: "a"}}, ResourceTemplates: []ResourceTemplate{{URITemplate: "mem://{x}", Name: "x"}},
		Prompts: []Prompt{{Name: "p", Arguments: []PromptArgument{{Name: "q", Required: true}}}}, Instructions: "use it"}
	if err := WriteCache(path, "s", "h1", e, epoch); err != nil {
		t.Fatal(err)
	}
	if err := WriteCache(path, "t", "h2", Entry{}, epoch.Add(-8*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	dir, _ := os.Stat(filepath.Dir(path))
	if st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Fatalf("modes: file %v dir %v", st.Mode().Perm(), dir.Mode().Perm())
	}
	f, err = ReadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := f.Lookup("s", "h1", epoch.Add(time.Hour))
	if !ok || got.Tools[0].Fingerprint == "" || got.Prompts[0].Arguments[0].Name != "q" || got.Instructions != "use it" || len(got.ResourceTemplates) != 1 {
		t.Fatalf("lookup: %+v %v", got, ok)
	}
	if _, ok := f.Lookup("s", "other-hash", epoch); ok {
		t.Fatal("an entry under another identity hash was used")
	}
	if _, ok := f.Lookup("s", "h1", epoch.Add(CacheMaxAge)); ok {
		t.Fatal("an entry 7 days old was used")
	}
	if _, ok := f.Lookup("t", "h2", epoch); ok {
		t.Fatal("an entry written 8 days ago was used")
	}
	// A corrupt or other-version file reads as empty and is replaced.
	os.WriteFile(path, []byte(`{"version":99,"servers":{}}`), 0o600)
	if f, err := ReadCache(path); err == nil || len(f.Servers) != 0 {
		t.Fatal("another version was read")
	}
	os.WriteFile(path, []byte(`{not json`), 0o600)
	if err := WriteCache(path, "s", "h1", e, epoch); err != nil {
		t.Fatal(err)
	}
	if f, _ := ReadCache(path); len(f.Servers) != 1 {
		t.Fatalf("corrupt file not replaced: %v", f.Servers)
	}
}

// Two processes writing different servers at once never corrupt the file,
// and both servers' entries survive.
func TestCacheConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), CacheFileName)
	exe, _ := os.Executable()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i, server := range []string{"alpha", "beta"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), envWriter+"="+path+" "+server+" 60")
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	f, err := ReadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"alpha", "beta"} {
		c, ok := f.Lookup(s, "hash-"+s, epoch)
		if !ok || c.Tools[0].Name != s+"_tool_59" {
			t.Fatalf("%s's last entry is missing: %+v", s, f.Servers[s])
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".mcp-cache-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// The identity hash covers how a server is reached and what is exposed,
// not its lifecycle or timeouts; it never holds a secret in clear.
func TestIdentityHash(t *testing.T) {
	ms := int64(5)
	f := false
	base := config.Server{Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"TOKEN": "s3cret-value"}}
	h := IdentityHash(base)
	if strings.Contains(h, "s3cret") || len(h) != 64 {
		t.Fatalf("hash %q", h)
	}
	same := base
	same.Lifecycle, same.RequestTimeoutMs, same.Debug, same.Description = "eager", &ms, true, "doc"
	if IdentityHash(same) != h {
		t.Fatal("lifecycle, timeouts or debug changed the identity hash")
	}
	for name, edit := range map[string]func(*config.Server){
		"args":            func(s *config.Server) { s.Args = []string{"-y", "y"} },
		"env":             func(s *config.Server) { s.Env = map[string]string{"TOKEN": "other"} },
		"cwd":             func(s *config.Server) { s.Cwd = "/tmp" },
		"exposeResources": func(s *config.Server) { s.ExposeResources = &f },
		"includeTools":    func(s *config.Server) { s.IncludeTools = []string{"a*"} },
		"excludeTools":    func(s *config.Server) { s.ExcludeTools = []string{"a*"} },
		"socket":          func(s *config.Server) { s.Socket = "/x.sock" },
	} {
		s := base
		edit(&s)
		if IdentityHash(s) == h {
			t.Errorf("%s did not change the identity hash", name)
		}
	}
	u := config.Server{URL: "https://x/mcp", Headers: map[string]string{"A": "1"}}
	for name, edit := range map[string]func(*config.Server){
		"url":         func(s *config.Server) { s.URL = "https://y/mcp" },
		"headers":     func(s *config.Server) { s.Headers = map[string]string{"A": "2"} },
		"auth":        func(s *config.Server) { s.Auth = "bearer" },
		"bearerToken": func(s *config.Server) { s.BearerToken = "t" },
		"oauth":       func(s *config.Server) { s.OAuth = &config.OAuth{ClientID: "c"} },
	} {
		s := u
		edit(&s)
		if IdentityHash(s) == IdentityHash(u) {
			t.Errorf("%s did not change the identity hash", name)
		}
	}
}

func TestFingerprintIgnoresSpacingNotContent(t *testing.T) {
	a := ParseTools([]json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)})[0]
	b := ParseTools([]json.RawMessage{json.RawMessage(`{"inputSchema": {"properties": {"a": {"type": "string"}}, "type": "object"}, "name": "t"}`)})[0]
	c := ParseTools([]json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}`)})[0]
	if a.Fingerprint != b.Fingerprint || a.Fingerprint == c.Fingerprint {
		t.Fatalf("fingerprints %s %s %s", a.Fingerprint, b.Fingerprint, c.Fingerprint)
	}
}

// TestCacheLockRefusesSymlink: a symbolic link in place of the lock file is
// refused with a clear error; the file it points at is neither created nor
// touched.
func TestCacheLockRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFileName)
	target := filepath.Join(dir, "elsewhere")
	if err := os.Symlink(target, path+".lock"); err != nil {
		t.Fatal(err)
	}
	err := WriteCache(path, "s", "h", Entry{}, time.Unix(1_800_000_000, 0))
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("WriteCache through a symlinked lock: err = %v, want a symbolic-link refusal", err)
	}
	if _, serr := os.Lstat(target); !os.IsNotExist(serr) {
		t.Fatalf("the symlink's target was created (lstat err %v)", serr)
	}
	if _, serr := os.Stat(path); !os.IsNotExist(serr) {
		t.Fatalf("the cache was written despite the refused lock (stat err %v)", serr)
	}
	// A dangling symlink to an existing file: the file keeps its content.
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteCache(path, "s", "h", Entry{}, time.Unix(1_800_000_000, 0)); err == nil {
		t.Fatal("WriteCache through a symlink to an existing file succeeded")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("target changed: %q", b)
	}
}
