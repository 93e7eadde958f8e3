package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/catalog"
)

// paramDescription bounds a parameter's description in renderings.
const paramDescription = 100

// schemaNode is the part of a JSON Schema the renderings read.
type schemaNode struct {
	Type        json.RawMessage        `json:"type"`
	Description string                 `json:"description"`
	Properties  map[string]*schemaNode `json:"properties"`
	Required    []string               `json:"required"`
	Enum        []json.RawMessage      `json:"enum"`
	Default     json.RawMessage        `json:"default"`
	Items       *schemaNode            `json:"items"`
	AnyOf       []*schemaNode          `json:"anyOf"`
	OneOf       []*schemaNode          `json:"oneOf"`
	Ref         string                 `json:"$ref"`
}

// typeName renders a node's type compactly: string, number[], "a" | "b", …
func (n *schemaNode) typeName() string {
	if n == nil {
		return "any"
	}
	if len(n.Enum) > 0 {
		vals := make([]string, 0, len(n.Enum))
		for i, e := range n.Enum {
			if i == 8 {
				vals = append(vals, "…")
				break
			}
			vals = append(vals, string(e))
		}
		return "enum: " + strings.Join(vals, ", ")
	}
	var t string
	var ts []string
	switch {
	case json.Unmarshal(n.Type, &t) == nil && t != "":
		ts = []string{t}
	case json.Unmarshal(n.Type, &ts) == nil && len(ts) > 0:
	}
	if len(ts) == 0 {
		alts := append(append([]*schemaNode(nil), n.AnyOf...), n.OneOf...)
		for _, a := range alts {
			ts = append(ts, a.typeName())
		}
	}
	for i, x := range ts {
		if x == "array" && n.Items != nil {
			ts[i] = n.Items.typeName() + "[]"
		}
	}
	if len(ts) == 0 {
		if n.Properties != nil {
			return "object"
		}
		return "any"
	}
	return strings.Join(ts, " | ")
}

// renderParameters renders an input schema's top-level properties, one per
// line: `name (type, required) [default: x] - description`. Nested objects
// show their own properties one level deeper.
func renderParameters(schema json.RawMessage, indent string) string {
	var n schemaNode
	if len(schema) == 0 || json.Unmarshal(schema, &n) != nil || len(n.Properties) == 0 {
		return ""
	}
	var lines []string
	renderProps(&n, indent, 0, &lines)
	// Parameter names, enums and descriptions are server text.
	return catalog.CleanText(strings.Join(lines, "\n"))
}

func renderProps(n *schemaNode, indent string, depth int, lines *[]string) {
	required := map[string]bool{}
	for _, r := range n.Required {
		required[r] = true
	}
	names := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		names = append(names, k)
	}
	// Required parameters first, then by name: stable whatever the map order.
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	for _, k := range names {
		p := n.Properties[k]
		if p == nil {
			p = &schemaNode{}
		}
		line := fmt.Sprintf("%s%s (%s", indent, k, p.typeName())
		if required[k] {
			line += ", required"
		}
		line += ")"
		if len(p.Default) > 0 {
			line += " [default: " + clip(string(p.Default), 40) + "]"
		}
		if d := oneLine(p.Description); d != "" {
			line += " - " + clip(d, paramDescription)
		}
		*lines = append(*lines, line)
		if len(p.Properties) > 0 && depth < 1 {
			renderProps(p, indent+"  ", depth+1, lines)
		}
	}
}

// expectedParameters is appended to a tool error so the model can correct
// its arguments.
func expectedParameters(e *entry) string {
	if e.Tool == nil {
		return ""
	}
	if p := renderParameters(e.Tool.InputSchema, "  "); p != "" {
		return "\nExpected parameters:\n" + p
	}
	return ""
}
