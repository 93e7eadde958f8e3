// This file makes hosts/ a module of its own, so that the root module's
// ./... patterns (go list, go vet, go test) never descend into the npm
// packages' node_modules here, which may hold .go files.
module github.com/mcprt/mcprt/hosts

go 1.26
