package testserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// EnvNoteLog names the environment variable holding the file the server
// appends the method of every notification it receives from the client to,
// one per line, in every mode. Tests use it to see what a client sent (for
// example that it sent notifications/cancelled, or that it did not).
const EnvNoteLog = "MCPRT_TEST_NOTE_LOG"

// maxNoteLine bounds how much of one incoming line the note tap keeps while
// looking for a notification's method; longer lines are not notifications
// any client of ours sends.
const maxNoteLine = 1 << 20

var noteMu sync.Mutex // serialises appends to the note log

// logNote appends method to the note log, when one is configured.
func logNote(method string) {
	path := os.Getenv(EnvNoteLog)
	if path == "" || method == "" {
		return
	}
	noteMu.Lock()
	defer noteMu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(method + "\n")
	_ = f.Close()
}

// noteMethod returns the method of a JSON-RPC notification (a message with a
// method and no id), or "".
func noteMethod(msg []byte) string {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &head) != nil || !mcpline.IsNull(head.ID) {
		return ""
	}
	return head.Method
}

// logNotesHTTP logs every POST body that is a notification, then hands the
// request on. It does nothing unless the note log is configured.
func logNotesHTTP(next http.Handler) http.Handler {
	if os.Getenv(EnvNoteLog) == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, mcpline.MaxLine))
			if err != nil {
				http.Error(w, "cannot read request body", http.StatusBadRequest)
				return
			}
			logNote(noteMethod(body))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// noteTap passes a line stream through unchanged and logs the method of
// every notification line in it.
type noteTap struct {
	r       io.Reader
	line    []byte
	skipped bool // the current line grew past maxNoteLine
}

// tapNotes wraps r with a noteTap when the note log is configured.
func tapNotes(r io.Reader) io.Reader {
	if os.Getenv(EnvNoteLog) == "" {
		return r
	}
	return &noteTap{r: r}
}

func (t *noteTap) Read(p []byte) (int, error) {
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
			logNote(noteMethod(t.line))
		}
		t.line, t.skipped = t.line[:0], false
		rest = rest[i+1:]
	}
	return n, err
}

func (t *noteTap) keep(b []byte) {
	if t.skipped {
		return
	}
	if len(t.line)+len(b) > maxNoteLine {
		t.line, t.skipped = t.line[:0], true
		return
	}
	t.line = append(t.line, b...)
}
