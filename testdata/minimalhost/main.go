// Command minimalhost is the smallest useful mcprt host: it starts the
// runtime on the configuration files of its working directory, runs the
// mcp tool once with the JSON arguments given, prints the answer and
// closes. docs/embedding.md measures its binary (TestMinimalHostBinary).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcprt/mcprt"
)

func main() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	fmt.Println(mcp.Execute(ctx, json.RawMessage(os.Args[1])).Text)
}
