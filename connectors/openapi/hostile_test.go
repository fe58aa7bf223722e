package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestHostileDocument: what a document written to mislead makes the
// connector send, recorded by the servers on 127.0.0.1 that get it. With
// base_url set, no server variable takes a request to another origin; no
// path template reaches a path other than the one its operation names
// (a "." or ".." segment, however encoded, would move it past base_url's
// path and past the path: globs of operations.exclude and approve, which
// match the template); and no argument, nor a parameter name the
// document gives, adds a path segment, a query parameter, a header line
// or a cookie.
func TestHostileDocument(t *testing.T) {
	api := newRecorder(t, nil)
	other := newRecorder(t, nil)
	otherHost := strings.TrimPrefix(other.srv.URL, "http://")
	op := func(id string, params ...string) string {
		return `{"get":{"operationId":"` + id + `","parameters":[` + strings.Join(params, ",") + `],"responses":{"200":{"description":"ok"}}}}`
	}
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},
	"servers":[{"url":"{scheme}://{host}/v1","variables":{"scheme":{"default":"http","enum":["https"]},"host":{"default":"` + otherHost + `"}}}],
	"paths":{
	  "/op-server":{"get":{"operationId":"opServer","servers":[{"url":"{s}//{h}/x","variables":{"s":{"default":"http:"},"h":{"default":"` + otherHost + `"}}}],"responses":{"200":{"description":"ok"}}}},
	  "/../admin":` + op("dotDot") + `,
	  "/a/%2e%2e/admin":` + op("encodedDotDot") + `,
	  "/a/..%2fadmin":` + op("dotDotSlash") + `,
	  "/a/.%2E/admin":` + op("mixedDotDot") + `,
	  "/a/..%5cadmin":` + op("dotDotBackslash") + `,
	  "/./admin":` + op("dot") + `,
	  "/items/{id}":` + op("item", `{"name":"id","in":"path","required":true,"schema":{"type":"string"}}`) + `,
	  "/refs/{ref}":` + op("ref", `{"name":"ref","in":"path","required":true,"x-multi-segment":true,"schema":{"type":"string"}}`) + `,
	  "/q?admin=1#x":` + op("literal") + `,
	  "/names":` + op("names", `{"name":"X-A\r\nX-Evil","in":"header","schema":{"type":"string"}}`, `{"name":"c; sid","in":"cookie","schema":{"type":"string"}}`) + `,
	  "/search":` + op("search", `{"name":"q","in":"query","schema":{"type":"string"}}`, `{"name":"X-Trace","in":"header","schema":{"type":"string"}}`, `{"name":"pref","in":"cookie","schema":{"type":"string"}}`) + `
	}}`
	c, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, doc), BaseURL: api.srv.URL + "/v1",
		Auth: &Auth{APIKey: &APIKey{In: KeyInCookie, Name: "sid", Value: "pinned-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, tt := range []struct {
		op, args string
		uri      string // what the API got; "" when the call is refused
		header   map[string]string
		refused  string // the message of a refused call
	}{
		{op: "opServer", args: `{}`, uri: "/v1/op-server"},
		{op: "item", args: `{"id":"a/b?c=d#e"}`, uri: "/v1/items/a%2Fb%3Fc%3Dd%23e"},
		{op: "item", args: `{"id":"../admin"}`, refused: `makes the path segment ".."`},
		{op: "item", args: `{"id":"%2e%2e"}`, uri: "/v1/items/%252e%252e"},
		{op: "ref", args: `{"ref":"heads/a?b=c#d"}`, uri: "/v1/refs/heads/a%3Fb%3Dc%23d"},
		{op: "ref", args: `{"ref":"a/../../admin"}`, refused: `makes the path segment ".."`},
		{op: "literal", args: `{}`, uri: "/v1/q%3Fadmin=1%23x"},
		{op: "names", args: `{"c; sid":"v"}`, uri: "/v1/names", header: map[string]string{"Cookie": "c%3B%20sid=v; sid=pinned-secret"}},
		{op: "names", args: `{"X-A\r\nX-Evil":"1"}`, refused: `is not a valid HTTP token`},
		{op: "search", args: `{"q":"x&admin=1#f","X-Trace":"t","pref":"p; sid=stolen"}`, uri: "/v1/search?q=x%26admin%3D1%23f",
			header: map[string]string{"X-Trace": "t", "Cookie": "pref=p%3B%20sid%3Dstolen; sid=pinned-secret"}},
		{op: "search", args: `{"X-Trace":"t\r\nX-Evil: 1"}`, refused: "the value holds a control character"},
	} {
		before := len(api.requests())
		res, err := c.Call(context.Background(), tt.op, json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.op, tt.args, err)
		}
		if reqs := other.requests(); len(reqs) > 0 {
			t.Fatalf("%s: a request left base_url's origin: %s %s (Cookie %q)", tt.op, reqs[0].Method, reqs[0].URI, reqs[0].Header.Get("Cookie"))
		}
		if tt.refused != "" {
			if !res.IsError || !strings.Contains(res.Message, tt.refused) || len(api.requests()) != before {
				t.Errorf("%s %s: %+v, %d requests sent; want it refused (%q) and nothing sent", tt.op, tt.args, res, len(api.requests())-before, tt.refused)
			}
			continue
		}
		if res.IsError {
			t.Errorf("%s %s: %s", tt.op, tt.args, res.Message)
			continue
		}
		got := api.last(t)
		if got.URI != tt.uri {
			t.Errorf("%s %s: the API got %s, want %s", tt.op, tt.args, got.URI, tt.uri)
		}
		for k, v := range tt.header {
			if got.Header.Get(k) != v || len(got.Header.Values(k)) != 1 {
				t.Errorf("%s %s: header %s %q, want %q", tt.op, tt.args, k, got.Header.Values(k), v)
			}
		}
		if got.Header.Get("X-Evil") != "" {
			t.Errorf("%s %s: a header line was added: %q", tt.op, tt.args, got.Header)
		}
	}
	// The operations whose path has a "." or ".." segment are not methods:
	// skipped, each with a warning naming the path.
	diags := strings.Join(c.Capabilities().Diagnostics, "\n")
	for _, id := range []string{"dotDot", "encodedDotDot", "dotDotSlash", "mixedDotDot", "dotDotBackslash", "dot"} {
		if c.ops[id] != nil {
			_, _ = c.Call(context.Background(), id, json.RawMessage(`{}`))
			t.Errorf("%s (%s %s) is a method; a call sent %s", id, c.ops[id].Method, c.ops[id].Path, api.last(t).URI)
		}
	}
	for _, path := range []string{"/../admin", "/a/%2e%2e/admin", "/a/..%2fadmin", "/a/.%2E/admin", "/a/..%5cadmin", "/./admin"} {
		if !strings.Contains(diags, `path "`+path+`" has a `) {
			t.Errorf("no warning names %s: %s", path, diags)
		}
	}
}

// A document whose server is not an http(s) URL (a variable's default
// making it ftp://, or no host) loads with a warning naming it, as one
// naming no server does, and its calls fail saying so until base_url is
// set; it failed the whole connector with "base URL: not an absolute
// http(s) URL", a URL nobody configured.
func TestServerNotHTTP(t *testing.T) {
	api := newRecorder(t, nil)
	for _, server := range []string{
		`{"url":"{scheme}://api.example/v1","variables":{"scheme":{"default":"ftp"}}}`,
		`{"url":"https:///v1"}`,
	} {
		doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[` + server + `],
		"paths":{"/p":{"get":{"operationId":"p","responses":{"200":{"description":"ok"}}}}}}`
		p := writeDoc(t, doc)
		c, err := New(context.Background(), Config{Name: "api", Document: p})
		if err != nil {
			t.Errorf("server %s: %v; want the document loaded", server, err)
			continue
		}
		diags := strings.Join(c.Capabilities().Diagnostics, "\n")
		res, err := c.Call(context.Background(), "p", json.RawMessage(`{}`))
		c.Close()
		if !strings.Contains(diags, "is not an http(s) URL") || err != nil || !res.IsError || !strings.Contains(res.Message, "set base_url") {
			t.Errorf("server %s: warnings %q, call %v %+v; want a warning and a failed call naming the server", server, diags, err, res)
		}
		c, err = New(context.Background(), Config{Name: "api", Document: p, BaseURL: api.srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Call(context.Background(), "p", json.RawMessage(`{}`)); err != nil || res.IsError || api.last(t).URI != "/p" {
			t.Errorf("server %s with base_url: %v %+v", server, err, res)
		}
		c.Close()
	}
}
