package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// answerWith returns a handler that answers status with a Content-Type
// ("-" for none at all) and body.
func answerWith(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType == "-" {
			w.Header()["Content-Type"] = nil // no sniffing either
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// TestResponses checks how each kind of response body reaches the
// program.
func TestResponses(t *testing.T) {
	for _, tt := range []struct {
		name        string
		method      string
		status      int
		contentType string
		body        string
		want        string // the Result's Value
	}{
		{"json", "GET", 200, "application/json; charset=utf-8", "{\"a\": 1.50,\n \"b\": [true, null]}", `{"a":1.50,"b":[true,null]}`},
		{"json with BOM", "GET", 200, "application/json", "\ufeff[1]", `[1]`},
		{"+json", "GET", 200, "application/vnd.github+json", `{"x":"<y>"}`, `{"x":"<y>"}`},
		{"invalid json is text", "GET", 200, "application/json", `{"a":`, `"{\"a\":"`},
		{"text", "GET", 200, "text/plain; charset=utf-8", "hello <b>world</b>\n", `"hello <b>world</b>\n"`},
		{"html", "GET", 200, "text/html", "<p>hi</p>", `"<p>hi</p>"`},
		{"xml", "GET", 200, "application/xml", "<a>1</a>", `"<a>1</a>"`},
		{"+xml", "GET", 200, "application/atom+xml", "<feed/>", `"<feed/>"`},
		{"form", "GET", 200, "application/x-www-form-urlencoded", "a=1&b=2", `"a=1&b=2"`},
		{"binary", "GET", 200, "image/png", "\x89PNG\x00", `{"mediaType":"image/png","base64":"iVBORwA="}`},
		{"octet-stream", "GET", 200, "application/octet-stream; x=y", "\x00\x01", `{"mediaType":"application/octet-stream","base64":"AAE="}`},
		{"no type, JSON", "GET", 200, "-", `{"a":1}`, `{"a":1}`},
		{"no type, text", "GET", 200, "-", `plain`, `"plain"`},
		{"no type, binary", "GET", 200, "-", "\xff\xfe\x00", `{"mediaType":"application/octet-stream","base64":"//4A"}`},
		{"empty", "GET", 200, "application/json", "", `null`},
		{"no content", "DELETE", 204, "application/json", "", `null`},
		{"head", "HEAD", 200, "application/json", "", `null`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, answerWith(tt.status, tt.contentType, tt.body))
			c := newTestCaller(t, rec.srv.URL)
			res := callOK(t, c, &Operation{Method: tt.method, Path: "/r"}, `{}`)
			if got := string(res.Value); got != tt.want {
				t.Errorf("value %s, want %s", got, tt.want)
			}
		})
	}
}

// TestHTTPErrors checks a non-2xx answer: the message has the status, its
// reason and the API's own message, and names the operation; the value
// carries the status and the decoded body.
func TestHTTPErrors(t *testing.T) {
	long := strings.Repeat("é", 400)
	for _, tt := range []struct {
		name        string
		status      int
		contentType string
		body        string
		want        string // the message
	}{
		{"message", 404, "application/json", `{"message":"Pet not found","documentation_url":"https://x"}`, "404 Not Found: Pet not found (GET /pets/{id})"},
		{"error.message", 422, "application/json", `{"error":{"message":"name is invalid","code":7}}`, "422 Unprocessable Entity: name is invalid (GET /pets/{id})"},
		{"error_description", 400, "application/json", `{"error":"invalid_request","error_description":"missing x"}`, "400 Bad Request: missing x (GET /pets/{id})"},
		{"error string", 403, "application/json", `{"error":"forbidden"}`, "403 Forbidden: forbidden (GET /pets/{id})"},
		{"problem detail", 500, "application/problem+json", `{"title":"Oops","detail":"the database\nis down"}`, "500 Internal Server Error: the database is down (GET /pets/{id})"},
		{"problem title", 500, "application/problem+json", `{"title":"Oops","detail":" "}`, "500 Internal Server Error: Oops (GET /pets/{id})"},
		{"errors[0].message", 409, "application/json", `{"errors":[{"message":"conflict"},{"message":"other"}]}`, "409 Conflict: conflict (GET /pets/{id})"},
		{"errors[0]", 400, "application/json", `{"errors":["first","second"]}`, "400 Bad Request: first (GET /pets/{id})"},
		{"text", 503, "text/plain", "Service\n  Unavailable   now\n", "503 Service Unavailable: Service Unavailable now (GET /pets/{id})"},
		{"long text bounded", 502, "text/plain", long, "502 Bad Gateway: " + strings.Repeat("é", maxMessage/2) + "… (GET /pets/{id})"},
		{"no message", 418, "application/json", `{"code":1}`, "418 I'm a teapot (GET /pets/{id})"},
		{"empty", 401, "application/json", ``, "401 Unauthorized (GET /pets/{id})"},
		{"non-standard status", 499, "application/json", `{}`, "499 status code 499 (GET /pets/{id})"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, answerWith(tt.status, tt.contentType, tt.body))
			c := newTestCaller(t, rec.srv.URL)
			op := &Operation{Method: "GET", Path: "/pets/{id}", Params: []Param{{Name: "id", Prop: "id", In: InPath, Required: true}}}
			res, err := c.call(context.Background(), op, json.RawMessage(`{"id":1}`))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Message != tt.want {
				t.Errorf("message %q, want %q", res.Message, tt.want)
			}
			var detail HTTPError
			if err := json.Unmarshal(res.Value, &detail); err != nil {
				t.Fatalf("value %s: %v", res.Value, err)
			}
			wantBody := decodeBody("GET", &answer{status: tt.status, header: http.Header{"Content-Type": {tt.contentType}}, body: []byte(tt.body)})
			if detail.Status != tt.status || string(detail.Body) != string(wantBody) {
				t.Errorf("value %s, want status %d and body %s", res.Value, tt.status, wantBody)
			}
		})
	}
}

// TestSizeCap checks that a body over the cap fails the call, whether its
// length is announced or not, and that a body at the cap is read.
func TestSizeCap(t *testing.T) {
	const limit = 1000
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Has("chunked") {
			w.(http.Flusher).Flush() // no Content-Length
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	})
	c := newTestCaller(t, rec.srv.URL)
	c.maxBytes = limit
	op := &Operation{Method: "GET", Path: "/big", Params: []Param{{Name: "n", Prop: "n", In: InQuery}, {Name: "chunked", Prop: "chunked", In: InQuery}}}
	for _, tt := range []struct {
		args string
		want string // "" for success
	}{
		{`{"n":1000}`, ""},
		{`{"n":1000,"chunked":1}`, ""},
		{`{"n":1001}`, "GET /big: response body too large: 1001 bytes announced, over the limit of 1000 bytes"},
		{`{"n":100000,"chunked":1}`, "GET /big: response body too large: over the limit of 1000 bytes"},
	} {
		res, err := c.call(context.Background(), op, json.RawMessage(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tt.want == "" && (res.IsError || len(res.Value) != limit+2):
			t.Errorf("%s: %+v, want the body", tt.args, res)
		case tt.want != "" && (!res.IsError || res.Message != tt.want):
			t.Errorf("%s: %+v, want %q", tt.args, res, tt.want)
		}
	}
}

// TestTimeout checks that a call with no answer within the call timeout
// fails with a transport error that says so, whether the server is silent
// or stalls in the body.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "start")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c := newTestCaller(t, rec.srv.URL, func(cfg *Config) { cfg.CallTimeout = 50 * time.Millisecond })
	for _, path := range []string{"/silent", "/stall"} {
		res, err := c.call(context.Background(), &Operation{Method: "GET", Path: path}, nil)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "GET "+path+": no answer within 50ms (the call timeout)") {
			t.Errorf("%s: %+v, %v; want the call timeout", path, res, err)
		}
	}
	// The caller's own cancellation is not reported as the call timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.call(ctx, &Operation{Method: "GET", Path: "/silent"}, nil); err == nil || strings.Contains(err.Error(), "call timeout") {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRedirects checks that redirects are followed within the same
// scheme, host and port only (credentials and body kept), at most 10
// times; any other 3xx is the answer, and the other host gets nothing.
func TestRedirects(t *testing.T) {
	other := newRecorder(t, nil)
	var rec *recorder
	rec = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-b":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/post-to-b":
			http.Redirect(w, r, "/b", http.StatusTemporaryRedirect)
		case "/to-other":
			http.Redirect(w, r, other.srv.URL+"/x", http.StatusFound)
		case "/to-localhost":
			// The same port under another host name.
			http.Redirect(w, r, strings.Replace(rec.srv.URL, "127.0.0.1", "localhost", 1)+"/b", http.StatusMovedPermanently)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"at":"b"}`)
		}
	})
	c := newTestCaller(t, rec.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{Bearer: "tok-redirect"} })

	res := callOK(t, c, &Operation{Method: "GET", Path: "/to-b"}, `{}`)
	if string(res.Value) != `{"at":"b"}` {
		t.Errorf("followed: %s", res.Value)
	}
	if got := rec.last(t); got.URI != "/b" || got.Header.Get("Authorization") != "Bearer tok-redirect" {
		t.Errorf("redirected request %+v", got)
	}

	callOK(t, c, &Operation{Method: "POST", Path: "/post-to-b", Body: &Body{Prop: "body", MediaType: "application/json"}}, `{"body":{"k":1}}`)
	if got := rec.last(t); got.URI != "/b" || got.Method != "POST" || string(got.Body) != `{"k":1}` {
		t.Errorf("307: %+v", got)
	}

	for _, path := range []string{"/to-other", "/to-localhost"} {
		res, err := c.call(context.Background(), &Operation{Method: "GET", Path: path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Message, "not followed (only redirects to the same scheme, host and port are)") {
			t.Errorf("%s: %+v", path, res)
		}
		var detail HTTPError
		if err := json.Unmarshal(res.Value, &detail); err != nil || detail.Status/100 != 3 {
			t.Errorf("%s: value %s", path, res.Value)
		}
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
	if got := rec.last(t); got.URI != "/to-localhost" {
		t.Errorf("last request %q: the localhost redirect was followed", got.URI)
	}

	before := len(rec.requests())
	res, _ = c.call(context.Background(), &Operation{Method: "GET", Path: "/loop"}, nil)
	if !res.IsError || !strings.HasPrefix(res.Message, "302 Found") {
		t.Errorf("loop: %+v", res)
	}
	if n := len(rec.requests()) - before; n != maxRedirects+1 {
		t.Errorf("loop: %d requests, want %d", n, maxRedirects+1)
	}
}

// TestCallResultShape pins the Result of a success: a value, no error.
func TestCallResultShape(t *testing.T) {
	rec := newRecorder(t, answerWith(201, "application/json", `{"id":1}`))
	c := newTestCaller(t, rec.srv.URL)
	res, err := c.call(context.Background(), &Operation{Method: "POST", Path: "/p"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(connectors.Result{Value: json.RawMessage(`{"id":1}`)}, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAPIMessageDoesNotBuildTheBody: finding the API's message in an error
// body reads only the members it can be in, and builds nothing of the
// rest: parsed whole, an error body of "[0,0,…]" under the 16 MiB cap was
// 640 MiB of values (40 times its size), for each such answer at once.
func TestAPIMessageDoesNotBuildTheBody(t *testing.T) {
	body := []byte(`{"pad":[0` + strings.Repeat(",0", 1<<20) + `],"errors":[{"message":"boom","pad":[0` + strings.Repeat(",0", 1<<20) + `]}]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	msg := apiMessage(body)
	runtime.ReadMemStats(&after)
	if msg != "boom" {
		t.Fatalf("message %q, want boom", msg)
	}
	// The member the message is in is copied, the body is not built.
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(2*len(body)) {
		t.Errorf("finding the message in %d KiB allocated %d KiB, %.1f times the body", len(body)>>10, got>>10, float64(got)/float64(len(body)))
	}
}
