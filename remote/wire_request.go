package remote

import (
	"strconv"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// A request is the other hot message (a tool call's way in): written by
// hand as json.Marshal would spell it when its strings need no escaping
// and its arguments are compact JSON, and read with jsonscan when it is
// sure to read it as encoding/json would; anything else goes the general
// way (TestWireRoundTrip, TestRequestFastPath).

// appendRequest appends r's body; false (b unchanged) when it is not
// plain enough to be written by hand.
func appendRequest(b []byte, r *requestMsg) ([]byte, bool) {
	if !plainString(r.Op) || !plainString(r.Name) || (len(r.Args) > 0 && !jsonscan.Compact(r.Args)) {
		return b, false
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, r.ID, 10)
	b = append(b, `,"op":"`...)
	b = append(append(b, r.Op...), '"')
	if r.Name != "" {
		b = append(b, `,"name":"`...)
		b = append(append(b, r.Name...), '"')
	}
	if len(r.Args) > 0 {
		b = append(append(b, `,"args":`...), r.Args...)
	}
	return append(b, '}'), true
}

// plainString reports whether s is written between quotes as it is (no
// byte that JSON or json.Marshal's HTML escaping would escape).
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

var requestKeys = []string{"id", "op", "name", "args"}

// splitRequest reads a request body as json.Unmarshal would into a
// requestMsg; false when it is not sure (then it is decoded the general
// way). Args is a subslice of b.
func splitRequest(b []byte) (*requestMsg, bool) {
	var v [4][]byte
	if !jsonscan.Object(b, requestKeys, v[:]) {
		return nil, false
	}
	r := &requestMsg{}
	if v[0] != nil {
		id, err := strconv.ParseUint(string(v[0]), 10, 64)
		if err != nil {
			return nil, false
		}
		r.ID = id
	}
	for i, dst := range []*string{&r.Op, &r.Name} {
		if raw := v[1+i]; raw != nil {
			s, ok := jsonscan.String(raw)
			if !ok {
				return nil, false
			}
			*dst = s
		}
	}
	if raw := v[3]; raw != nil {
		if string(raw) == "null" {
			return nil, false
		}
		r.Args = raw
	}
	return r, true
}

var serverKey = []string{"server"}

// argsServer is the "server" member of a request's arguments as
// json.Unmarshal would read it into a string; false when not sure.
func argsServer(args []byte) (string, bool) {
	var v [1][]byte
	if !jsonscan.Object(args, serverKey, v[:]) {
		return "", false
	}
	if v[0] == nil {
		return "", true
	}
	return jsonscan.String(v[0])
}
