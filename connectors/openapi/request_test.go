package openapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// requestOf makes a call of request through c with args, as
// Connector.Call does.
func requestOf(ctx context.Context, c *caller, args json.RawMessage) (connectors.Result, error) {
	tg, err := parseRequest(args, c.base)
	if err != nil {
		return c.failed("request: " + err.Error()), nil
	}
	return c.request(ctx, tg)
}

// requestOK calls request and decodes its answer; the test fails unless
// the call succeeded.
func requestOK(t *testing.T, c *caller, args string) requestAnswer {
	t.Helper()
	res, err := requestOf(context.Background(), c, json.RawMessage(args))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if res.IsError {
		t.Fatalf("request failed: %s", res.Message)
	}
	var ans requestAnswer
	if err := json.Unmarshal(res.Value, &ans); err != nil {
		t.Fatalf("answer %s: %v", res.Value, err)
	}
	return ans
}

// TestRequest checks the escape hatch: what it sends, and that it returns
// status, headers and body for any status.
func TestRequest(t *testing.T) {
	var rec *recorder
	rec = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/items":
			w.Header().Add("X-Multi", "a")
			w.Header().Add("X-Multi", "b")
			w.Header().Set("Link", "<"+rec.srv.URL+"/api/items?page=2>; rel=\"next\"")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `[1,2]`)
		case "/api/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found"}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	c := newTestCaller(t, rec.srv.URL+"/api", func(cfg *Config) {
		cfg.Auth = &Auth{Bearer: "b-token"}
		cfg.Headers = map[string]string{"X-Tenant": "t1"}
	})

	ans := requestOK(t, c, `{"method":"get","path":"/items?sort=asc","query":{"page":1,"tag":["x","y z"],"skip":null,"on":true},"headers":{"X-Tenant":"mine","X-Extra":"e","Authorization":"Basic nope"}}`)
	got := rec.last(t)
	if got.Method != "GET" || got.URI != "/api/items?sort=asc&page=1&tag=x&tag=y%20z&on=true" {
		t.Errorf("sent %s %s", got.Method, got.URI)
	}
	if h := []string{got.Header.Get("Authorization"), got.Header.Get("X-Tenant"), got.Header.Get("X-Extra")}; !cmp.Equal(h, []string{"Bearer b-token", "t1", "e"}) {
		t.Errorf("headers %q", h)
	}
	if ans.Status != 200 || string(ans.Body) != `[1,2]` || ans.Headers["x-multi"] != "a, b" || ans.Headers["content-type"] != "application/json" {
		t.Errorf("answer %+v", ans)
	}

	// Following the Link header: an absolute URL on the base's host.
	next := strings.TrimSuffix(strings.TrimPrefix(strings.Split(ans.Headers["link"], ";")[0], "<"), ">")
	requestOK(t, c, `{"method":"GET","path":"`+next+`"}`)
	if got := rec.last(t); got.URI != "/api/items?page=2" || got.Header.Get("Authorization") != "Bearer b-token" {
		t.Errorf("next page: %s %v", got.URI, got.Header)
	}

	// A 404 is an answer, not an error.
	ans = requestOK(t, c, `{"method":"GET","path":"missing"}`)
	if ans.Status != 404 || string(ans.Body) != `{"message":"Not Found"}` {
		t.Errorf("404: %+v", ans)
	}

	// HEAD and 204 have a null body.
	if ans = requestOK(t, c, `{"method":"HEAD","path":"/items"}`); string(ans.Body) != "null" || ans.Status != 200 {
		t.Errorf("HEAD: %+v", ans)
	}
}

// TestRequestBody checks request's bodies: JSON by default, a string sent
// as it is under a Content-Type, other values encoded for it.
func TestRequestBody(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	for _, tt := range []struct {
		args     string
		wantBody string
		wantCT   string
	}{
		{`{"method":"POST","path":"/p","body":{"a":[1,"<x>"]}}`, `{"a":[1,"<x>"]}`, "application/json"},
		{`{"method":"POST","path":"/p","body":"text"}`, `"text"`, "application/json"},
		{`{"method":"PUT","path":"/p","headers":{"content-type":"text/csv"},"body":"a,b\n1,2"}`, "a,b\n1,2", "text/csv"},
		{`{"method":"POST","path":"/p","headers":{"Content-Type":"application/x-www-form-urlencoded"},"body":{"a":"1 2","b":[3,4]}}`, "a=1%202&b=3&b=4", "application/x-www-form-urlencoded"},
		{`{"method":"POST","path":"/p","headers":{"Content-Type":"application/octet-stream"},"body":{"base64":"AAE="}}`, "\x00\x01", "application/octet-stream"},
		{`{"method":"DELETE","path":"/p","body":null}`, "", ""},
	} {
		requestOK(t, c, tt.args)
		got := rec.last(t)
		if string(got.Body) != tt.wantBody || got.Header.Get("Content-Type") != tt.wantCT {
			t.Errorf("%s: sent %q as %q, want %q as %q", tt.args, got.Body, got.Header.Get("Content-Type"), tt.wantBody, tt.wantCT)
		}
	}
}

// TestRequestRefused checks request's argument validation: each bad field
// is named, and nothing is sent.
func TestRequestRefused(t *testing.T) {
	rec := newRecorder(t, nil)
	other := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL+"/api")
	for _, tt := range []struct {
		args string
		want string
	}{
		{`[1]`, "request: the argument must be an object {method, path, query?, headers?, body?}, not an array"},
		{`{"method":"GET","path":"/x","data":1}`, `request: unknown field "data" (the fields are method, path, query, headers, body)`},
		{`{"path":"/x"}`, "request: method: required, a string (one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE)"},
		{`{"method":"FETCH","path":"/x"}`, `request: method: "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE`},
		{`{"method":"GET"}`, "request: path: required, a non-empty string"},
		{`{"method":"GET","path":""}`, "request: path: required, a non-empty string"},
		{`{"method":"GET","path":"` + other.srv.URL + `/x"}`, `request: path: "` + other.srv.URL + `/x" is not on the base URL's scheme, host and port`},
		{`{"method":"GET","path":"//evil.example/x"}`, `request: path: "//evil.example/x" is not on the base URL's scheme, host and port`},
		{`{"method":"GET","path":"https://` + strings.TrimPrefix(rec.srv.URL, "http://") + `/x"}`, `is not on the base URL's scheme, host and port`},
		{`{"method":"GET","path":"/a/../../admin"}`, `request: path: "/a/../../admin" has a ".." segment, which is not allowed`},
		{`{"method":"GET","path":"/a/%2E%2e/admin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/..%2fadmin"}`, `request: path: "/a/..%2fadmin" has a ".." segment, which is not allowed`},
		{`{"method":"GET","path":"/a/..%2Fadmin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/%2e%2e/admin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/%2e%2e%2fadmin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/%2E%2E%2Fadmin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/..\\admin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/..%5cadmin"}`, `has a ".." segment`},
		{`{"method":"GET","path":"/a/.%2fadmin"}`, `has a "." segment`},
		{`{"method":"GET","path":"` + rec.srv.URL + `/other/x"}`, `request: path: "` + rec.srv.URL + `/other/x" is not under the base URL's path (/api); give a path relative to the base URL, or an absolute URL under it`},
		{`{"method":"GET","path":"` + rec.srv.URL + `/apix"}`, `is not under the base URL's path (/api)`},
		{`{"method":"GET","path":"` + rec.srv.URL + `"}`, `is not under the base URL's path (/api)`},
		{`{"method":"GET","path":"http://u:p@` + strings.TrimPrefix(rec.srv.URL, "http://") + `/x"}`, "request: path: a URL with user information is not allowed"},
		{`{"method":"GET","path":"/x","query":[1]}`, "request: query: must be an object, not an array"},
		{`{"method":"GET","path":"/x","query":{"f":{"a":1}}}`, "request: query.f: must be a string, number, boolean or an array of them, not an object"},
		{`{"method":"GET","path":"/x","query":{"f":[[1]]}}`, "request: query.f: must be a string, number, boolean or an array of them, not an array"},
		{`{"method":"GET","path":"/x","headers":{"X-A":["v"]}}`, "request: headers.X-A: must be a string, not an array"},
		{`{"method":"GET","path":"/x","headers":{"X-A":"v\r\nEvil: 1"}}`, "request: headers.X-A: header X-A: the value holds a control character"},
		{`{"method":"GET","path":"/x","headers":{"Bad Name":"v"}}`, `request: headers.Bad Name: header name "Bad Name" is not a valid HTTP token`},
		{`{"method":"GET","path":"/x","headers":{"x-http-method-override":"DELETE"}}`, `request: headers.x-http-method-override: a program cannot override the request's method (many servers take this header for it): its approval is decided by the method it names`},
		{`{"method":"POST","path":"/x","headers":{"X-HTTP-Method":"DELETE"}}`, `request: headers.X-HTTP-Method: a program cannot override the request's method`},
		{`{"method":"POST","path":"/x","headers":{"X-Method-Override":"PUT"}}`, `request: headers.X-Method-Override: a program cannot override the request's method`},
		{`{"method":"POST","path":"/x","headers":{"Content-Type":"application/x-www-form-urlencoded"},"body":[1]}`, "request: body: a form body must be an object (or a string already encoded), not an array"},
	} {
		res, err := requestOf(context.Background(), c, json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		if !res.IsError || !strings.Contains(res.Message, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.args, res.Message, tt.want)
		}
	}
	if n := len(rec.requests()) + len(other.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
