package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// A remote server's redirect is followed within its origin (scheme, host
// and port) and refused to any other, so that the configured headers
// (credentials) and the requests (a tool's arguments) reach no other
// server.
func TestRedirectsStayOnTheOrigin(t *testing.T) {
	_, fakeURL := startFake(t, map[string]string{"": `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`}, nil)
	proxy := fixture.Proxy(t, fakeURL)

	var mu sync.Mutex
	var elsewhere []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Clone())
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	defer home.Close()

	headers := map[string]string{"X-Api-Key": "k-secret-1234"}
	ctx, cancel := fixture.WithDeadline(t, context.Background())
	defer cancel()
	c, err := Dial(ctx, Config{Name: "r", URL: home.URL + "/moved", Headers: headers, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Dial through a same-origin redirect: %v", err)
	}
	if tools, err := c.Tools(ctx); err != nil || len(tools) != 1 {
		t.Errorf("Tools through a same-origin redirect: %v, %v", tools, err)
	}
	c.Close()

	c, err = Dial(ctx, Config{Name: "r", URL: home.URL + "/away", Headers: headers, Logger: testLogger(t)})
	if err == nil {
		c.Close()
		t.Fatal("Dial followed a redirect to another origin")
	}
	want := "redirect to " + other.URL + "/mcp refused: only redirects within " + home.URL + " are followed"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Dial error %q does not contain %q", err, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) > 0 {
		t.Errorf("the other origin received %d requests, the first with headers %v", len(elsewhere), elsewhere[0])
	}
}
