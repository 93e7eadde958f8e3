package eventsrv

import (
	"encoding/base64"
	"encoding/json"
	"errors"
)

// A cursor names a position in one event type's log: "everything up to and
// including sequence number seq". On the wire it is opaque: base64url
// (unpadded) of the JSON array [epoch, name, seq]. The epoch names the log's
// lifetime (a server without a state directory starts a new one at every
// start); a cursor from another epoch cannot be placed, so the server
// replays what it retains and reports the gap.
type cursor struct {
	epoch string
	name  string
	seq   uint64
}

// maxCursor bounds an incoming cursor's length; ours are far shorter.
const maxCursor = 1024

// String encodes the cursor for the wire.
func (c cursor) String() string {
	b, _ := json.Marshal([]any{c.epoch, c.name, c.seq}) // strings and a number always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

var errBadCursor = errors.New("eventsrv: not a cursor of this server")

// parseCursor decodes a cursor from the wire.
func parseCursor(s string) (cursor, error) {
	if len(s) > maxCursor {
		return cursor{}, errBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, errBadCursor
	}
	var parts []json.RawMessage
	if json.Unmarshal(b, &parts) != nil || len(parts) != 3 {
		return cursor{}, errBadCursor
	}
	var c cursor
	if json.Unmarshal(parts[0], &c.epoch) != nil || json.Unmarshal(parts[1], &c.name) != nil ||
		json.Unmarshal(parts[2], &c.seq) != nil || c.epoch == "" {
		return cursor{}, errBadCursor
	}
	return c, nil
}
