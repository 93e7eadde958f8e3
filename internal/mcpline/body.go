package mcpline

import (
	"io"
	"net/http"
)

// readBody reads a POSTed message of at most MaxLine bytes, the bound of
// every front; false when it answered the request with an error instead.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxLine+1))
	if err != nil {
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return nil, false
	}
	if len(body) > MaxLine {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return body, true
}
