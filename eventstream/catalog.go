package eventstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxCatalogPages bounds one events/list pagination: the first page and at
// most 99 cursors.
const MaxCatalogPages = 100

// Catalog errors. Each is wrapped with detail; test with errors.Is.
var (
	// ErrCatalog: an events/list result is not a valid catalog page.
	ErrCatalog = errors.New("eventstream: invalid event catalog")
	// ErrPagination: a repeated cursor or more than MaxCatalogPages pages.
	ErrPagination = errors.New("eventstream: invalid or excessive event catalog pagination")
	// ErrUnknownEvent: the catalog has no event of that name.
	ErrUnknownEvent = errors.New("eventstream: unknown MCP event")
	// ErrNoPush: the event does not offer push delivery (the only one
	// supported; polling and webhooks are not).
	ErrNoPush = errors.New("eventstream: event does not offer push delivery")
)

// Descriptor is one event type of a server's catalog.
type Descriptor struct {
	Name        string
	Description string
	// Delivery lists the delivery modes ("push", "poll", "webhook", ...).
	Delivery []string
	// InputSchema is the arguments' JSON schema (an object), nil if absent.
	InputSchema json.RawMessage
	// Raw is the descriptor exactly as the server sent it, unknown fields
	// (payloadSchema, _meta) included; the catalog result renders it.
	Raw json.RawMessage
}

// MarshalJSON renders the descriptor as the server sent it.
func (d Descriptor) MarshalJSON() ([]byte, error) { return d.Raw, nil }

// Push reports whether the event offers push delivery.
func (d Descriptor) Push() bool { return slices.Contains(d.Delivery, "push") }

// CatalogPage is one validated events/list result.
type CatalogPage struct {
	Events []Descriptor
	// NextCursor is the next page's cursor, empty on the last page.
	NextCursor string
}

// ParseCatalogPage validates one events/list result: an object whose
// events is an array of objects, each with a string name and a delivery
// array of strings, an optional string description and an optional object
// inputSchema; nextCursor, when present, is a string. Unknown fields pass
// through (Descriptor.Raw).
func ParseCatalogPage(result json.RawMessage) (CatalogPage, error) {
	// Pointers tell a missing field from an empty one; the descriptors
	// stay raw so each is validated on its own and kept as sent.
	var w struct {
		Events     *[]json.RawMessage `json:"events"`
		NextCursor *json.RawMessage   `json:"nextCursor"`
	}
	if !isObject(result) {
		return CatalogPage{}, fmt.Errorf("%w: the result is not an object", ErrCatalog)
	}
	if err := json.Unmarshal(result, &w); err != nil {
		return CatalogPage{}, fmt.Errorf("%w: %v", ErrCatalog, err)
	}
	if w.Events == nil {
		return CatalogPage{}, fmt.Errorf("%w: events is missing", ErrCatalog)
	}
	var page CatalogPage
	// A null nextCursor is taken as absent (the last page); any other
	// non-string is an error. An empty string also ends the listing.
	if w.NextCursor != nil && string(*w.NextCursor) != "null" {
		if err := json.Unmarshal(*w.NextCursor, &page.NextCursor); err != nil {
			return CatalogPage{}, fmt.Errorf("%w: nextCursor is not a string", ErrCatalog)
		}
	}
	page.Events = make([]Descriptor, 0, len(*w.Events))
	for i, raw := range *w.Events {
		d, err := parseDescriptor(raw)
		if err != nil {
			return CatalogPage{}, fmt.Errorf("%w: events[%d]: %s", ErrCatalog, i, err)
		}
		page.Events = append(page.Events, d)
	}
	return page, nil
}

// parseDescriptor validates one catalog entry. Typed fields make a wrong
// type fail the whole entry (as the reference's schema does); unknown
// fields are ignored here and kept in Raw.
func parseDescriptor(raw json.RawMessage) (Descriptor, error) {
	if !isObject(raw) {
		return Descriptor{}, errors.New("not an object")
	}
	var w struct {
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Delivery    *[]string       `json:"delivery"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return Descriptor{}, errors.New("wrong field type: " + err.Error())
	}
	switch {
	case w.Name == nil:
		return Descriptor{}, errors.New("name is missing")
	case w.Delivery == nil:
		return Descriptor{}, errors.New("delivery is missing")
	case w.InputSchema != nil && !isObject(w.InputSchema):
		return Descriptor{}, errors.New("inputSchema is not an object")
	}
	d := Descriptor{Name: *w.Name, Delivery: *w.Delivery, InputSchema: w.InputSchema, Raw: raw}
	if w.Description != nil {
		d.Description = *w.Description
	}
	return d, nil
}

// Pager follows one events/list pagination. Its zero value is ready: call
// Page with each result until it reports done.
type Pager struct {
	pages  int             // pages added so far
	seen   map[string]bool // cursors already followed
	events []Descriptor    // every page's descriptors, in order
}

// Page adds one result. It returns the cursor of the next page to request,
// or done when this was the last page. A repeated cursor or a
// MaxCatalogPages+1-th page fails with ErrPagination.
func (p *Pager) Page(result json.RawMessage) (next string, done bool, err error) {
	page, err := ParseCatalogPage(result)
	if err != nil {
		return "", false, err
	}
	p.pages++
	p.events = append(p.events, page.Events...)
	if page.NextCursor == "" {
		return "", true, nil
	}
	if p.seen[page.NextCursor] {
		return "", false, fmt.Errorf("%w: cursor %q repeated", ErrPagination, page.NextCursor)
	}
	// Following this cursor would fetch page pages+1.
	if p.pages >= MaxCatalogPages {
		return "", false, fmt.Errorf("%w: more than %d pages", ErrPagination, MaxCatalogPages)
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	p.seen[page.NextCursor] = true
	return page.NextCursor, false, nil
}

// Events returns the descriptors of every page added so far.
func (p *Pager) Events() []Descriptor { return p.events }

// FindPush returns the descriptor named name, failing with ErrUnknownEvent
// when there is none and with ErrNoPush, naming the event and the delivery
// modes it offers, when it does not offer push.
func FindPush(events []Descriptor, name string) (Descriptor, error) {
	i := slices.IndexFunc(events, func(d Descriptor) bool { return d.Name == name })
	if i < 0 {
		return Descriptor{}, fmt.Errorf("%w: %s", ErrUnknownEvent, name)
	}
	d := events[i]
	// Only push is supported: polling loops and webhook receivers are not
	// part of the runtime, so the error names what the event does offer.
	if !d.Push() {
		modes := "none"
		if len(d.Delivery) > 0 {
			modes = strings.Join(d.Delivery, ", ")
		}
		return Descriptor{}, fmt.Errorf("%w: %s offers %s; polling and webhooks are not supported", ErrNoPush, name, modes)
	}
	return d, nil
}
