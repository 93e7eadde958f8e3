package catalog

import (
	"encoding/json"
	"fmt"
)

// Listing gathers the items of one catalog refresh (tools, then resources
// and resource templates, then prompts) into an Entry under the catalog's
// rules: limits, admission, cleaned text. Failures of the optional parts
// become notes; only the tools can fail a listing. It is pure; the server
// actor's refresh (supervisor.Server) drives it.
type Listing struct {
	Entry Entry
	Notes []string
	// resItems are the resources/list items, kept until the templates are
	// listed too (the resource rules judge them together); resources are
	// every resources and templates list that succeeded, for their limit.
	resItems  []json.RawMessage
	resources [][]json.RawMessage
}

// NewListing starts a listing of a server with instructions.
func NewListing(instructions string) *Listing {
	return &Listing{Entry: Entry{Instructions: instructions}}
}

// Add takes the items of one list method that succeeded. An error means
// the tools cannot be used: limit says they broke a catalog limit,
// otherwise they were refused as a whole.
func (l *Listing) Add(method string, items []json.RawMessage) (limit bool, err error) {
	switch method {
	case "tools/list":
		if err := CheckList("tools", items); err != nil {
			return true, err
		}
		tools, rejected, err := AdmitTools(items)
		if err != nil {
			return false, fmt.Errorf("tools catalog: %s", err)
		}
		l.Entry.Tools, l.Entry.Rejections = tools, rejected
	case "resources/list":
		l.resItems = items
		l.resources = append(l.resources, items)
	case "resources/templates/list":
		l.resources = append(l.resources, items)
		if err := CheckList("resources", l.resources...); err != nil {
			l.Notes = append(l.Notes, err.Error())
		} else if rs, ts, dropped, err := AdmitResources(l.resItems, items); err != nil {
			l.Notes = append(l.Notes, "resources catalog failed: "+err.Error())
		} else {
			l.Entry.Resources, l.Entry.ResourceTemplates = rs, ts
			if dropped > 0 {
				l.Notes = append(l.Notes, fmt.Sprintf("%d resources with user information in their URI were left out", dropped))
			}
		}
	case "prompts/list":
		if err := CheckList("prompts", items); err != nil {
			l.Notes = append(l.Notes, err.Error())
		} else if prompts, err := AdmitPrompts(items); err != nil {
			l.Notes = append(l.Notes, "prompts catalog failed: "+err.Error())
		} else {
			l.Entry.Prompts = prompts
		}
	}
	return false, nil
}

// Skip notes an optional list method that the server answered with an
// error (it advertised the capability but does not implement the method).
// Resources stand on their own when only the templates failed.
func (l *Listing) Skip(method, message string) {
	l.Notes = append(l.Notes, method+" failed: "+CleanText(message))
	if method == "resources/templates/list" && l.resItems != nil {
		if rs, _, _, err := AdmitResources(l.resItems, nil); err == nil {
			l.Entry.Resources = rs
		}
	}
}
