package extension

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Definition declares a companion's protocol capability.
type Definition struct {
	// Namespace owns the methods, e.g. "events".
	Namespace string
	// Requests are request methods answered once, e.g. "events/list".
	Requests []string
	// Streams are long-lived request methods, e.g. "events/stream".
	Streams []string
	// Notifications are the server notifications the capability uses, e.g.
	// "notifications/events/event".
	Notifications []string
}

// ReservedNamespaces are MCP's own namespaces, which no companion may own.
var ReservedNamespaces = []string{
	"tools", "resources", "prompts", "subscriptions", "completion", "logging", "sampling",
	"elicitation", "roots", "server", "tasks", "notifications", "ping", "initialize",
}

// ErrInvalidDefinition marks a definition Validate refuses.
var ErrInvalidDefinition = errors.New("extension: invalid protocol definition")

// Validate checks a definition and returns a copy the caller cannot change
// afterwards (with duplicate methods removed, in declaration order).
func Validate(d Definition) (Definition, error) {
	ns := d.Namespace
	if ns == "" || strings.ContainsAny(ns, "/ \t\n") {
		return Definition{}, fmt.Errorf("%w: the namespace must be a non-empty word without '/'", ErrInvalidDefinition)
	}
	if slices.Contains(ReservedNamespaces, ns) {
		return Definition{}, fmt.Errorf("%w: namespace %q is reserved by MCP", ErrInvalidDefinition, ns)
	}
	out := Definition{Namespace: ns}
	var err error
	if out.Requests, err = methods(d.Requests, ns+"/", "request"); err != nil {
		return Definition{}, err
	}
	if out.Streams, err = methods(d.Streams, ns+"/", "stream"); err != nil {
		return Definition{}, err
	}
	if out.Notifications, err = methods(d.Notifications, "notifications/"+ns+"/", "notification"); err != nil {
		return Definition{}, err
	}
	for _, m := range out.Requests {
		if slices.Contains(out.Streams, m) {
			return Definition{}, fmt.Errorf("%w: %q is declared both as a request and as a stream", ErrInvalidDefinition, m)
		}
	}
	if len(out.Requests)+len(out.Streams)+len(out.Notifications) == 0 {
		return Definition{}, fmt.Errorf("%w: it declares no method", ErrInvalidDefinition)
	}
	return out, nil
}

func methods(in []string, prefix, kind string) ([]string, error) {
	var out []string
	for _, m := range in {
		rest, ok := strings.CutPrefix(m, prefix)
		if !ok || rest == "" || strings.ContainsAny(m, " \t\n") {
			return nil, fmt.Errorf("%w: %s method %q must be %s<name>", ErrInvalidDefinition, kind, m, prefix)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Declares reports whether m is one of list.
func Declares(list []string, m string) bool { return slices.Contains(list, m) }
