package eventstream

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Canonical returns the canonical JSON of args (an object; nil is {}):
// object keys sorted, no insignificant space, numbers kept as written.
// Two subscriptions are identical when server, name and canonical
// arguments are equal, so key order does not matter.
func Canonical(args json.RawMessage) (string, error) {
	if args == nil {
		return "{}", nil
	}
	if !isObject(args) {
		return "", fmt.Errorf("%w: arguments must be an object", ErrSpec)
	}
	// Decode generically with numbers as written (json.Number), so large
	// integers and decimals compare by their text, not as float64.
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: arguments: %v", ErrSpec, err)
	}
	// One object only: `{} {}` is not an argument object.
	if dec.More() {
		return "", fmt.Errorf("%w: arguments: trailing data", ErrSpec)
	}
	b, err := encode(v) // maps encode with sorted keys
	if err != nil {
		return "", fmt.Errorf("%w: arguments: %v", ErrSpec, err)
	}
	return string(b), nil
}
