package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// sessionSchema compiles one definition of docs/sidecar.schema.json.
func sessionSchema(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../docs/sidecar.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sidecar.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sidecar.schema.json#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// conforms fails the test when line is not an instance of sch.
func conforms(t *testing.T, sch *jsonschema.Schema, line string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("line %.200q does not follow docs/sidecar.schema.json: %v", line, err)
	}
}

// sidecar is a running `runtime session` with pipes on both ends.
type sidecar struct {
	t *testing.T
	// out and in, when set, check every line read and sent against
	// docs/sidecar.schema.json.
	out, inSchema *jsonschema.Schema
	cmd           *exec.Cmd
	in            io.WriteCloser
	lines         chan string
}

func startSidecar(t *testing.T, args ...string) *sidecar {
	t.Helper()
	return startSidecarArgs(t, append(args, "session")...)
}

// startSidecarArgs runs the binary with args as given (they name the
// session command and its own flags).
func startSidecarArgs(t *testing.T, args ...string) *sidecar {
	t.Helper()
	// testkit.Ctx only guards against a hang; the test waits on lines.
	cmd := exec.CommandContext(testkit.Ctx(t), binary(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MCPRT_AGENT_DIR="+t.TempDir())
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sidecar{t: t, cmd: cmd, in: in, lines: make(chan string, 1024)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	return s
}

func (s *sidecar) send(line string) {
	s.t.Helper()
	s.sendRaw(line)
	if s.inSchema != nil {
		conforms(s.t, s.inSchema, line)
	}
}

// sendRaw sends a line the schema does not allow (bad input).
func (s *sidecar) sendRaw(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// await returns the first line (skipping others) for which match is true.
func (s *sidecar) await(what string, match func(raw string, v map[string]any) bool) map[string]any {
	s.t.Helper()
	guard := testkit.Ctx(s.t) // a hang guard: the wait is for the line
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("stdout ended while waiting for %s", what)
			}
			if s.out != nil {
				conforms(s.t, s.out, line)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				s.t.Fatalf("stdout line is not a JSON object: %q", line)
			}
			if match(line, v) {
				return v
			}
		case <-guard.Done():
			s.t.Fatalf("no line for %s", what)
		}
	}
}

func hasID(id string) func(string, map[string]any) bool {
	return func(raw string, _ map[string]any) bool { return strings.HasPrefix(raw, `{"id":`+id+",") }
}

func TestSessionProtocol(t *testing.T) {
	stdio, _ := stdioTestServer(t, "--stdio")
	s := startSidecar(t, "--stdio", stdio)
	s.out, s.inSchema = sessionSchema(t, "output"), sessionSchema(t, "input")

	hello := s.await("the hello", func(string, map[string]any) bool { return true })
	h, ok := hello["hello"].(map[string]any)
	if !ok {
		t.Fatalf("first line is not a hello: %v", hello)
	}
	if h["protocol"] != sessionProtocol || h["version"] != float64(sessionVersion) {
		t.Errorf("hello names %v version %v", h["protocol"], h["version"])
	}
	names := map[string]bool{}
	for _, tool := range h["tools"].([]any) {
		names[tool.(map[string]any)["name"].(string)] = true
	}
	if !names["mcp"] || !names["mcp_events"] {
		t.Errorf("hello tools %v lack mcp or mcp_events", names)
	}

	// A line that is not JSON is answered without an id; the session goes on.
	s.sendRaw("this is not json")
	e := s.await("the parse error", func(_ string, v map[string]any) bool { return v["error"] != nil })
	if _, has := e["id"]; has || e["error"].(map[string]any)["code"] != "parse_error" {
		t.Errorf("malformed line answered %v", e)
	}

	// A JSON object with an id but a mistyped member is answered with its id.
	s.sendRaw(`{"id":"bad1","tool":5}`)
	bad := s.await("the mistyped request's error", hasID(`"bad1"`))
	if bad["error"] == nil || bad["error"].(map[string]any)["code"] != "invalid_request" {
		t.Errorf("mistyped request answered %v", bad)
	}

	// A call in flight: its id cannot be reused until it answers; cancel ends it.
	s.send(`{"id":"h1","tool":"mcp","args":{"tool":"hang","args":{}}}`)
	s.send(`{"id":"h1","tool":"mcp","args":{"tool":"echo","args":{"message":"x"}}}`)
	dup := s.await("the duplicate id's error", hasID(`"h1"`))
	if dup["error"] == nil || dup["error"].(map[string]any)["code"] != "duplicate_id" {
		t.Errorf("reused id answered %v", dup)
	}
	s.send(`{"id":"h1","cancel":true}`)
	ended := s.await("the cancelled call's answer", hasID(`"h1"`))
	res, _ := ended["result"].(map[string]any)
	if res == nil || res["isError"] != true {
		t.Errorf("cancelled call answered %v", ended)
	}
	s.send(`{"id":"h1","cancel":true}`)
	if e := s.await("cancel of nothing", hasID(`"h1"`)); e["error"].(map[string]any)["code"] != "unknown_id" {
		t.Errorf("cancel of an id not in flight answered %v", e)
	}

	// Any JSON value is an id, echoed byte for byte.
	s.send(`{"id": {"x": [1, 2]}, "tool":"mcp","args":{"tool":"echo","args":{"message":"sidecar-hi"}}}`)
	got := s.await("the echo", hasID(`{"x": [1, 2]}`))
	if r, _ := got["result"].(map[string]any); r == nil || !strings.Contains(r["text"].(string), "echo: sidecar-hi") {
		t.Errorf("echo answered %v", got)
	}

	// Unknown tool and method, a method with a malformed param.
	s.sendRaw(`{"id":7,"tool":"nope"}`)
	if e := s.await("unknown tool", hasID("7")); e["error"].(map[string]any)["code"] != "unknown_tool" {
		t.Errorf("unknown tool answered %v", e)
	}
	s.sendRaw(`{"id":8,"method":"nope"}`)
	if e := s.await("unknown method", hasID("8")); e["error"].(map[string]any)["code"] != "unknown_method" {
		t.Errorf("unknown method answered %v", e)
	}
	s.sendRaw(`{"id":9,"method":"connect","params":{"server":5}}`)
	if e := s.await("bad params", hasID("9")); !strings.Contains(e["error"].(map[string]any)["message"].(string), "params.server") {
		t.Errorf("malformed params answered %v", e)
	}
	s.send(`{"id":11,"method":"callTool","params":{"server":"adhoc","tool":"echo","arguments":{"message":"typed"}}}`)
	if e := s.await("callTool", hasID("11")); !strings.Contains(fmt.Sprint(e["result"]), "echo: typed") {
		t.Errorf("callTool answered %v", e)
	}
	s.send(`{"id":12,"method":"serverTools","params":{"server":"adhoc"}}`)
	if e := s.await("serverTools", hasID("12")); !strings.Contains(fmt.Sprint(e["result"]), "echo") {
		t.Errorf("serverTools answered %v", e)
	}
	s.send(`{"id":10,"method":"servers"}`)
	if e := s.await("servers", hasID("10")); len(e["result"].([]any)) != 1 {
		t.Errorf("servers answered %v", e)
	}

	// A line over the limit is skipped with an error; the session goes on.
	s.sendRaw(`{"id":"big","tool":"mcp","args":{"x":"` + strings.Repeat("a", maxSessionLine) + `"}}`)
	if e := s.await("the line-too-long error", func(_ string, v map[string]any) bool { return v["error"] != nil }); e["id"] != nil {
		t.Errorf("a line over the limit answered %v", e)
	}

	// Closing stdin ends the session once the calls in flight answer.
	s.send(`{"id":"last","tool":"mcp","args":{"tool":"slow","args":{"ms":100}}}`)
	_ = s.in.Close()
	if e := s.await("the last call's answer", hasID(`"last"`)); e["result"] == nil {
		t.Errorf("the call in flight at end of input answered %v", e)
	}
	for range s.lines {
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("session exit: %v", err)
	}
}

// TestSessionReapsServers checks that the end of input reaps every server
// process the session started.
func TestSessionReapsServers(t *testing.T) {
	stdio, _ := stdioTestServer(t, "--stdio")
	s := startSidecar(t, "--stdio", stdio)
	s.send(`{"id":1,"tool":"mcp","args":{"tool":"grandchild","args":{}}}`)
	got := s.await("the grandchild's pid", hasID("1"))
	text := got["result"].(map[string]any)["text"].(string)
	var pid int
	for _, f := range strings.Fields(text) {
		if n, err := jsonInt(f); err == nil {
			pid = n
		}
	}
	if pid == 0 {
		t.Fatalf("no pid in %q", text)
	}
	_ = s.in.Close()
	for range s.lines {
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("session exit: %v", err)
	}
	testkit.Poll(testkit.Ctx(t), t, "the server's child process is gone", func() bool { return testkit.ProcGone(pid) })
}

func jsonInt(s string) (int, error) {
	var n int
	err := json.Unmarshal([]byte(s), &n)
	return n, err
}

// TestPythonSidecarHost runs docs/examples/sidecar_host.py, the Python host
// of docs/sidecar.md, against the CLI.
func TestPythonSidecarHost(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the Python host example (.ci/run installs it)")
	}
	stdio, _ := stdioTestServer(t, "--stdio")
	cmd := exec.CommandContext(testkit.Ctx(t), py, "../../docs/examples/sidecar_host.py", binary(t), "--stdio", stdio, "--", "echo", `{"message": "from python"}`)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MCPRT_AGENT_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python host: %v\n%s", err, out)
	}
	for _, want := range []string{"tools: mcp, mcp_events", "result: echo: from python"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("python host printed %q, want %q", out, want)
		}
	}
}
