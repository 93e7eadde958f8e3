package main

import (
	"context"
	"fmt"
	"log"

	"github.com/mcprt/mcprt"
)

func main() {
	ctx := context.Background()
	// Reads .mcp.json from the working directory; servers start lazily.
	rt, err := mcprt.Start(ctx, mcprt.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close() // closes connections and reaps server processes

	for _, t := range rt.Tools() { // register these with your model loop
		fmt.Printf("tool %q: %d-byte schema\n", t.Name, len(t.InputSchema))
	}
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	res := mcp.Execute(ctx, []byte(`{}`)) // status; {"tool": "echo", "args": {...}} calls
	fmt.Println(res.Text)
}
