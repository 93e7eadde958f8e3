package mcprt

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/mcprt/mcprt"

// Third-party modules by the name the rules use.
const (
	modProtoactor = "github.com/asynkron/protoactor-go"
	modMCP        = "github.com/mark3labs/mcp-go"
	modBackoff    = "github.com/cenkalti/backoff/v4"
	modLRU        = "github.com/hashicorp/golang-lru/v2"
	modCobra      = "github.com/spf13/cobra"
	modShlex      = "github.com/google/shlex"
	modHujson     = "github.com/tailscale/hujson"
	modTOML       = "github.com/BurntSushi/toml"
	modJSONSchema = "github.com/google/jsonschema-go"
	modURITmpl    = "github.com/yosida95/uritemplate/v3"
	modFlock      = "github.com/gofrs/flock"
	modXSys       = "golang.org/x/sys"
	modOAuth2     = "golang.org/x/oauth2"
	modJOSE       = "github.com/go-jose/go-jose/v4"
	modKeyring    = "github.com/zalando/go-keyring"
	modGRPC       = "google.golang.org/grpc"
	modProtobuf   = "google.golang.org/protobuf"
)

// layer is one row of docs/architecture.md's package table: what a package
// may import directly (module packages by folder, third-party by module
// path), and why the rest is forbidden.
type layer struct {
	allow []string
	why   string
}

var layers = map[string]layer{
	"messages":                     {nil, "messages is the contract everyone reads: standard library only"},
	"clock":                        {nil, "clock is a leaf: standard library only"},
	"config":                       {[]string{"messages", modHujson, modTOML}, "config is pure: no I/O beyond reading files, no actors, no transports"},
	"eventstream":                  {[]string{"messages", "clock", "internal/jsonscan", modLRU}, "eventstream is a pure state machine: no I/O, actors or transports"},
	"supervisor":                   {[]string{"messages", "clock", modBackoff}, "supervisor is a pure state machine: no I/O, actors or transports"},
	"sessions":                     {nil, "sessions is pure: the shared runtime member's rules for its sessions (calls, subscription shares, liveness, questions, wakeup split); standard library only"},
	"clientside":                   {nil, "clientside is pure: the client side of MCP's decisions (elicitation forms, answers, sampling checks); standard library only"},
	"extension":                    {[]string{"messages"}, "extension is pure: the protocol-extension API's decisions, no I/O, actors or transports"},
	"catalog":                      {[]string{"messages", "config", modJSONSchema, modURITmpl, modFlock, modLRU}, "catalog owns metadata and ranking: no actors, no transports"},
	"auth":                         {[]string{"messages", "clock", modOAuth2, modJOSE, modKeyring}, "auth is the OAuth client: discovery, grants and token stores; no actors, no transports"},
	"transports":                   {[]string{"messages", "clock", "config", "internal/jsonscan", modMCP, modXSys}, "transports must not know actors, supervision or protoactor"},
	"actors":                       {[]string{"messages", "clock", "eventstream", "supervisor", "extension", "catalog", modProtoactor}, "actors reach servers only through the connection port (messages.Dialer) and take ServerConfig values: never transports, config, tools, the root package, cmd or demoserver"},
	"tools":                        {[]string{"messages", "clock", "catalog", "eventstream", "actors", "config", "internal/jsonscan"}, "tools talk to actors through typed messages; never to transports or protoactor"},
	"":                             {[]string{"auth", "messages", "clock", "config", "eventstream", "supervisor", "extension", "clientside", "catalog", "transports", "actors", "tools", "internal/trace", "simseam"}, "the root package is the embedding API over everything below it"},
	"demoserver":                   {[]string{"messages", "clock", "internal/mcpline", "internal/mcpserve", "internal/eventsrv", modMCP}, "the demo server is a separate MCP server; it knows nothing of the runtime"},
	"remote":                       {[]string{"", "messages", "clock", "config", "eventstream", "supervisor", "clientside", "extension", "internal/jsonscan", "sessions", modProtoactor, modGRPC, modProtobuf}, "remote shares a runtime across processes over protoactor's remote and cluster; only it (and what imports it) links gRPC"},
	"cmd/runtime":                  {[]string{"", "auth", "demoserver", "messages", "clock", "config", "remote", modCobra, modShlex}, "cmd/runtime is wiring only"},
	"internal/testonly/testserver": {[]string{"messages", "clock", "internal/mcpline", "internal/mcpserve", "internal/eventsrv", modMCP}, "the test server is a real MCP server for tests; it knows nothing of the runtime"},
	"internal/testonly/testenv":    {[]string{"clock", "internal/testonly/testserver", modXSys, modFlock}, "testenv only installs and starts test peers"},
	"internal/testonly/bench":      {nil, "bench holds benchmarks only"},
	"internal/jsonscan":            {nil, "jsonscan is a leaf: standard library only"},
	"simseam":                      {[]string{"messages", "clock", "eventstream"}, "simseam holds the simulation and test seams: types only"},
	"internal/trace":               {[]string{"messages", "clock"}, "trace writes metadata-only protocol traces; it knows nothing of actors or transports"},
	"e2e":                          {nil, "e2e holds the end-to-end tests of the embedding API only"},
	"internal/testonly/testkit":    {[]string{"clock", "messages"}, "testkit holds test helpers only"},
	"internal/mcpline":             {[]string{modMCP}, "mcpline is the transport fronts of our MCP servers (line, legacy SSE, Streamable HTTP); it knows nothing of the runtime"},
	"internal/mcpserve":            {[]string{"internal/mcpline", modMCP}, "mcpserve is the MCP server core of our servers (mcp-go's mcp types only); it knows nothing of the runtime"},
	"internal/eventsrv":            {[]string{"clock", "internal/mcpline", "internal/mcpserve", modMCP}, "eventsrv serves the events protocol for our own servers; it knows nothing of the runtime"},
}

// pure packages are state machines: no goroutines, channels, locks or contexts.
var pure = []string{"eventstream", "supervisor", "extension", "clientside", "sessions"}

// goroutineOwners may contain go statements.
var goroutineOwners = []string{"auth", "transports", "actors", "remote", "cmd/runtime", "demoserver", "internal/testonly/testserver", "internal/testonly/testenv", "internal/mcpline", "internal/trace", "simtests"}

type listedPackage struct {
	ImportPath string
	Dir        string
	Imports    []string
	GoFiles    []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

func isStd(path string) bool {
	first := strings.SplitN(path, "/", 2)[0]
	return !strings.Contains(first, ".")
}

// TestLayering enforces docs/architecture.md's import table on every
// package's direct imports.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		name := rel(p.ImportPath)
		if name == "simtests" || strings.HasPrefix(name, "simtests/") {
			continue // simtests may import anything; nothing imports it (checked below)
		}
		row, ok := layers[name]
		if !ok {
			t.Errorf("package %q has no row in the layering table (deps_test.go and docs/architecture.md)", name)
			continue
		}
		for _, imp := range p.Imports {
			if isStd(imp) {
				continue
			}
			if !allowed(row.allow, imp) {
				t.Errorf("%s imports %s: forbidden (%s)", displayName(name), imp, row.why)
			}
		}
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			r := rel(imp)
			if strings.HasPrefix(imp, module+"/simtests") {
				t.Errorf("%s imports %s: nothing may import simtests", displayName(rel(p.ImportPath)), imp)
			}
			if strings.HasPrefix(imp, module+"/cmd/") {
				t.Errorf("%s imports %s: nothing may import cmd", displayName(rel(p.ImportPath)), imp)
			}
			if r == "internal/testonly/testserver" && rel(p.ImportPath) != "internal/testonly/testenv" {
				t.Errorf("%s imports the test server outside tests", displayName(rel(p.ImportPath)))
			}
			if strings.HasPrefix(r, "internal/testonly/") && !strings.HasPrefix(rel(p.ImportPath), "internal/testonly/") {
				t.Errorf("%s imports %s outside its tests: internal/testonly/ holds what only tests use", displayName(rel(p.ImportPath)), imp)
			}
		}
	}
}

func displayName(name string) string {
	if name == "" {
		return "package mcprt (root)"
	}
	return name
}

func allowed(allow []string, imp string) bool {
	for _, a := range allow {
		if strings.Contains(a, ".") { // third-party module path
			if imp == a || strings.HasPrefix(imp, a+"/") {
				return true
			}
			continue
		}
		want := module
		if a != "" {
			want += "/" + a
		}
		if imp == want {
			return true
		}
	}
	return false
}

// wallClock lists the time functions only clock/ and cmd/ may call.
var wallClock = map[string]bool{"Now": true, "Sleep": true, "After": true, "AfterFunc": true,
	"NewTimer": true, "NewTicker": true, "Tick": true, "Since": true, "Until": true}

// globalRand lists math/rand functions that use the unseeded global source.
var globalRand = map[string]bool{"Int": true, "Intn": true, "IntN": true, "Int63": true, "Int63n": true,
	"Int31": true, "Int31n": true, "Uint32": true, "Uint64": true, "Float64": true, "Float32": true,
	"Perm": true, "Shuffle": true, "N": true, "Read": true, "Seed": true, "Uint64N": true, "Int64N": true}

// TestHouseRules checks, file by file, the rules a linter would: no wall
// clock outside clock/ and cmd/, no sleeping in tests, no global
// math/rand, no go statements outside goroutine owners, nothing concurrent
// in the pure packages.
func TestHouseRules(t *testing.T) {
	root, _ := os.Getwd()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" || n == ".cache" || n == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		relPath, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(relPath))
		if dir == "." {
			dir = ""
		}
		isTest := strings.HasSuffix(path, "_test.go")
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", relPath, err)
			return nil
		}
		checkFile(t, fset, f, relPath, dir, isTest)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func under(dir string, prefixes ...string) bool {
	for _, p := range prefixes {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

func checkFile(t *testing.T, fset *token.FileSet, f *ast.File, relPath, dir string, isTest bool) {
	t.Helper()
	aliases := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		name := filepath.Base(p)
		if p == "math/rand/v2" {
			name = "rand"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		aliases[name] = p
		if !isTest && under(dir, pure...) && (p == "sync" || p == "context" || p == "sync/atomic") {
			t.Errorf("%s imports %s: pure packages (eventstream, supervisor) hold no locks or contexts", relPath, p)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			if !isTest && !under(dir, goroutineOwners...) {
				t.Errorf("%s: go statement outside a goroutine owner (%s)", fset.Position(x.Pos()), strings.Join(goroutineOwners, ", "))
			}
		case *ast.ChanType:
			if !isTest && under(dir, pure...) {
				t.Errorf("%s: channel in a pure package", fset.Position(x.Pos()))
			}
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch aliases[id.Name] {
			case "time":
				if isTest && x.Sel.Name == "Sleep" {
					t.Errorf("%s: a sleep in a test (advance a manual clock or use synctest)", fset.Position(x.Pos()))
				}
				if !isTest && wallClock[x.Sel.Name] && !under(dir, "clock", "cmd") {
					t.Errorf("%s: time.%s outside clock/ and cmd/ (use the injected clock)", fset.Position(x.Pos()), x.Sel.Name)
				}
			case "math/rand", "math/rand/v2":
				if !isTest && globalRand[x.Sel.Name] && !under(dir, "clock") {
					t.Errorf("%s: global math/rand.%s (use the injected clock.Rand)", fset.Position(x.Pos()), x.Sel.Name)
				}
			}
		}
		return true
	})
}

// TestEmbeddingLinksNoGRPC keeps gRPC (and protoactor's remote and
// cluster) out of hosts that do not share a runtime: only remote/ (and
// what imports it: cmd/runtime) links them.
func TestEmbeddingLinksNoGRPC(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, modGRPC) || p == module+"/remote" || p == modProtoactor+"/remote" || strings.HasPrefix(p, modProtoactor+"/cluster") {
			t.Errorf("the root package links %s: hosts that do not share a runtime must not link gRPC", p)
		}
	}
}

// mcpGoServer is mcp-go's server package. It imports santhosh-tekuri's JSON
// Schema library, whose package initialisation (compiling its
// meta-schemas) costs every process that links it some 10 ms
// (docs/performance.md, "Cold start").
const (
	mcpGoServer = modMCP + "/server"
	santhosh    = "github.com/santhosh-tekuri/jsonschema/v6"
)

// TestOurServersUseNoMCPGoServer: the packages linked into cmd/runtime that
// serve MCP (the demo server and what it is built on) import only mcp-go's
// mcp types; the test server (internal/testonly) may use mcp-go's server.
func TestOurServersUseNoMCPGoServer(t *testing.T) {
	for _, p := range listPackages(t) {
		switch rel(p.ImportPath) {
		case "demoserver", "internal/mcpline", "internal/mcpserve", "internal/eventsrv":
			for _, imp := range p.Imports {
				if imp == mcpGoServer {
					t.Errorf("%s imports %s: our servers are built on internal/mcpserve", rel(p.ImportPath), imp)
				}
			}
		}
	}
}

// TestRuntimeLinksNoJSONSchemaInit keeps santhosh-tekuri/jsonschema and
// mcp-go's server out of the CLI (our servers are built on
// internal/mcpserve, our transports are our own: TestNoMCPGoClient).
func TestRuntimeLinksNoJSONSchemaInit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./cmd/runtime").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, p := range deps {
		if p == santhosh || p == mcpGoServer {
			t.Errorf("cmd/runtime links %s: its package initialisation costs every command (docs/performance.md)", p)
		}
	}
}

// TestNoMCPGoClient keeps mcp-go's client out of the module: the runtime
// speaks to servers through its own transports (transports/streamable.go,
// legacysse.go, lineconn.go), and mcp-go's client/transport links
// mcp-go's server and with it santhosh-tekuri/jsonschema, whose package
// initialisation every CLI command paid. Tests may use mcp-go's client as
// a reference peer.
func TestNoMCPGoClient(t *testing.T) {
	forbidden := func(p string) bool {
		return p == modMCP+"/client" || strings.HasPrefix(p, modMCP+"/client/")
	}
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if forbidden(imp) {
				t.Errorf("%s imports %s: the runtime has its own client transports", displayName(rel(p.ImportPath)), imp)
			}
		}
	}
	out, err := exec.Command("go", "list", "-deps", ".", "./cmd/runtime").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if forbidden(p) {
			t.Errorf("the runtime links %s", p)
		}
	}
}
