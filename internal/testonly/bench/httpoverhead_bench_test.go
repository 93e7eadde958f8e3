package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcprt/mcprt/config"
)

// instantHTTP is a minimal Streamable HTTP endpoint in the benchmark's own
// process that answers every request at once with a precomputed JSON body
// (initialize, tools/list, and echo for anything else; no standalone GET
// stream). Both clients pay the same, small server cost, so the difference
// in ns/op between BenchmarkHTTPOverhead's two sides is the difference in
// the clients' own work, HTTP included.
func instantHTTP(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := echoReply
		switch req.Method {
		case "initialize":
			result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"i","version":"1"}}`)
			w.Header().Set("Mcp-Session-Id", "bench-session")
		case "tools/list":
			result = toolsList
		}
		var out bytes.Buffer
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(req.ID)
		out.WriteString(`,"result":`)
		out.Write(result)
		out.WriteString(`}`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out.Bytes())
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// BenchmarkHTTPOverhead is the client side's CPU per tool call over
// Streamable HTTP against an in-process endpoint that answers at once:
// go test ./internal/testonly/bench -run '^$' -bench HTTPOverhead -benchmem -count 5
func BenchmarkHTTPOverhead(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		tr, err := transport.NewStreamableHTTP(instantHTTP(b), transport.WithHTTPBasicClient(pooledHTTP()))
		if err != nil {
			b.Fatal(err)
		}
		httpLoop(b, bareClient(b, tr))
	})
	b.Run("runtime", func(b *testing.B) {
		httpLoop(b, runtimeCaller(b, config.Server{URL: instantHTTP(b)}))
	})
}

func httpLoop(b *testing.B, call caller) {
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0 := processCPU()
	for i := 0; i < b.N; i++ {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (client and in-process server) moves less with other
	// processes' load than wall time does.
	b.ReportMetric(float64((processCPU()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
