package testserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// EnvNoteLog names the environment variable holding the file the server
// appends the method of every notification it receives from the client to,
// one per line, in every mode. Tests use it to see what a client sent (for
// example that it sent notifications/cancelled, or that it did not). A
// notifications/cancelled adds a second line, [CancelNote], naming the
// request it cancels.
const EnvNoteLog = "MCPRT_TEST_NOTE_LOG"

// EnvRequestLog names the environment variable holding the file the server
// appends one JSON object per received request to, in every mode: a
// [RequestRecord].
const EnvRequestLog = "MCPRT_TEST_REQUEST_LOG"

// maxNoteLine bounds how much of one incoming line the tap keeps while
// looking at a message; longer lines are not messages any client of ours
// sends when a log is wanted.
const maxNoteLine = 1 << 20

// RequestRecord is one line of the request log.
type RequestRecord struct {
	Method string `json:"method"`
	// ID is the request id as the client spelled it (compact JSON).
	ID json.RawMessage `json:"id"`
	// Meta is the request's params._meta (compact JSON), or null.
	Meta json.RawMessage `json:"meta"`
	// MCPMethod and MCPName are the Mcp-Method and Mcp-Name headers of an
	// HTTP request ("" on stdio and sockets, or when absent).
	MCPMethod string `json:"mcpMethod"`
	MCPName   string `json:"mcpName"`
	// Params is the request's whole params member (compact JSON), or null.
	Params json.RawMessage `json:"params"`
}

// ReadRequestLog reads a request log written by the server.
func ReadRequestLog(path string) ([]RequestRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []RequestRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, mcpline.MaxLine)
	for sc.Scan() {
		var r RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return recs, err
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// CancelNote is the note-log line that records a notifications/cancelled
// for requestID: "notifications/cancelled " and the id as compact JSON
// (for example notifications/cancelled "mcprt-1" or notifications/cancelled 7).
func CancelNote(requestID json.RawMessage) string {
	return mcpline.CancelledMethod + " " + compactJSON(requestID)
}

var logMu sync.Mutex // serialises appends to the logs

// appendLine appends line to the file at path, when path is set.
func appendLine(path, line string) {
	if path == "" {
		return
	}
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line + "\n")
	_ = f.Close()
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil || b.Len() == 0 {
		return "null"
	}
	return b.String()
}

// logging reports whether any wire log is configured.
func logging() bool {
	return os.Getenv(EnvNoteLog) != "" || os.Getenv(EnvRequestLog) != ""
}

// logMessage records one incoming JSON-RPC message in the note log (a
// notification) or the request log (a request). header is the HTTP
// request's, or nil.
func logMessage(msg []byte, header http.Header) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &head) != nil || head.Method == "" {
		return
	}
	if mcpline.IsNull(head.ID) {
		notes := os.Getenv(EnvNoteLog)
		appendLine(notes, head.Method)
		if head.Method == mcpline.CancelledMethod {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(head.Params, &p)
			appendLine(notes, CancelNote(p.RequestID))
		}
		return
	}
	path := os.Getenv(EnvRequestLog)
	if path == "" {
		return
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(head.Params, &p)
	rec := RequestRecord{Method: head.Method, ID: json.RawMessage(compactJSON(head.ID)), Meta: json.RawMessage(compactJSON(p.Meta)),
		Params: json.RawMessage(compactJSON(head.Params))}
	if header != nil {
		rec.MCPMethod, rec.MCPName = header.Get(mcp.HeaderMethod), header.Get(mcp.HeaderName)
	}
	if b, err := json.Marshal(rec); err == nil {
		appendLine(path, string(b))
	}
}

// logHTTP logs every POSTed message with its headers, then hands the
// request on. It does nothing unless a log is configured.
func logHTTP(next http.Handler) http.Handler {
	if !logging() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, mcpline.MaxLine))
			if err != nil {
				http.Error(w, "cannot read request body", http.StatusBadRequest)
				return
			}
			logMessage(body, r.Header)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// wireTap passes a line stream through unchanged and logs every message in
// it.
type wireTap struct {
	r       io.Reader
	line    []byte
	skipped bool // the current line grew past maxNoteLine
}

// tapWire wraps r with a wireTap when a log is configured.
func tapWire(r io.Reader) io.Reader {
	if !logging() {
		return r
	}
	return &wireTap{r: r}
}

func (t *wireTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	rest := p[:n]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.keep(rest)
			break
		}
		t.keep(rest[:i])
		if !t.skipped {
			logMessage(t.line, nil)
		}
		t.line, t.skipped = t.line[:0], false
		rest = rest[i+1:]
	}
	return n, err
}

func (t *wireTap) keep(b []byte) {
	if t.skipped {
		return
	}
	if len(t.line)+len(b) > maxNoteLine {
		t.line, t.skipped = t.line[:0], true
		return
	}
	t.line = append(t.line, b...)
}
