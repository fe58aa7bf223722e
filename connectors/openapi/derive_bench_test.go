package openapi

import (
	"context"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

func githubDocument(b *testing.B) string { return fixture.GitHubDocument(b) }

// BenchmarkGitHubCold derives GitHub's document with an empty cache:
// read, parse, derive every operation with input and output schemas,
// assemble the tools and their shared definitions.
func BenchmarkGitHubCold(b *testing.B) {
	doc := githubDocument(b)
	b.ReportAllocs()
	for b.Loop() {
		c, err := New(context.Background(), Config{Name: "github", Document: doc})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(c.tools); n < 1100 {
			b.Fatalf("%d tools", n)
		}
	}
}

// BenchmarkGitHubWarm starts the connector from the derivation cache:
// read and hash the document, decode the cached derivation, assemble.
func BenchmarkGitHubWarm(b *testing.B) {
	doc := githubDocument(b)
	dir := b.TempDir()
	first, err := New(context.Background(), Config{Name: "github", Document: doc, CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	first.Close()
	b.ReportAllocs()
	for b.Loop() {
		c, err := New(context.Background(), Config{Name: "github", Document: doc, CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(c.tools); n < 1100 {
			b.Fatalf("%d tools", n)
		}
		c.Close()
	}
}

// BenchmarkGitHubDeclarations generates the TypeScript declarations of
// every method of GitHub's document (what `codemode-mcp types` prints).
func BenchmarkGitHubDeclarations(b *testing.B) {
	c, err := New(context.Background(), Config{Name: "github", Document: githubDocument(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := jsonref.Decode(c.Capabilities().Definitions)
		if err != nil {
			b.Fatal(err)
		}
		tc := typegen.Connector{Name: "github", Definitions: v, Methods: make([]connectors.Tool, 0, len(c.tools))}
		for _, t := range c.tools {
			tc.Methods = append(tc.Methods, connectors.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema})
		}
		if len(typegen.Declarations(tc)) < 1<<20 {
			b.Fatal("declarations too short")
		}
	}
}

// BenchmarkGitHubRoute resolves a request() call against GitHub's 1,225
// operations (connectors.Router), as the runtime does before every such
// call and Call does again: a path with an encoded '/' (two readings) that
// reaches one operation.
func BenchmarkGitHubRoute(b *testing.B) {
	c, err := New(context.Background(), Config{Name: "github", Document: githubDocument(b), BaseURL: "https://api.github.com"})
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"method":"GET","path":"/repos/golang/go/contents/src%2Fnet%2Fhttp/server.go","query":{"ref":"master"}}`)
	b.ReportAllocs()
	for b.Loop() {
		r, _, err := c.Route("request", args)
		if err != nil || len(r.Tools) == 0 {
			b.Fatalf("%+v %v", r, err)
		}
	}
}
