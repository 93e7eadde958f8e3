package demoserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpserve"
)

// The demo's resources and prompts, so that every part of a catalog can be
// tried: the resource AboutURI (the server's instructions, with a _meta
// member), the template FilesTemplate (a file under the root, as
// read_file reads it) and the prompt PromptGreet.
const (
	AboutURI      = "demo://about"
	FilesTemplate = "demo://files/{name}"
	PromptGreet   = "greet"
)

// demoMeta marks the demo's catalog items in their _meta.
var demoMeta = &mcp.Meta{AdditionalFields: map[string]any{"mcprt.dev/demo": true}}

// addCatalog adds the demo's resources, template and prompt to s.
func addCatalog(s *mcpserve.Server, fs files) {
	about := mcp.NewResource(AboutURI, "about", mcp.WithResourceDescription("What the demo server offers."), mcp.WithMIMEType("text/plain"))
	about.Meta = demoMeta
	s.AddResource(about, func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: AboutURI, MIMEType: "text/plain", Text: Instructions}}, nil
	})
	tmpl := mcp.NewResourceTemplate(FilesTemplate, "files",
		mcp.WithTemplateDescription("A UTF-8 file under the server's root directory (at most 1 MiB)."), mcp.WithTemplateMIMEType("text/plain"))
	tmpl.Meta = demoMeta
	s.AddResourceTemplate(tmpl, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		uri := req.Params.URI
		name, ok := strings.CutPrefix(uri, "demo://files/")
		if !ok || name == "" {
			return nil, fmt.Errorf("not a file of the demo: %s", uri)
		}
		text, err := fs.read(name)
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: text}}, nil
	})
	greet := mcp.NewPrompt(PromptGreet, mcp.WithPromptDescription("Greets someone by name."),
		mcp.WithArgument("name", mcp.RequiredArgument(), mcp.ArgumentDescription("Who to greet.")))
	greet.Meta = demoMeta
	s.AddPrompt(greet, func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("A greeting.", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Say hello to "+req.Params.Arguments["name"]+".")),
		}), nil
	})
}
