package openapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// TestStaticAuth checks what a server receives for each static credential,
// with the connector's headers, and that credentials win over the call's
// own headers.
func TestStaticAuth(t *testing.T) {
	rec := newRecorder(t, nil)
	op := &Operation{Method: "GET", Path: "/a", Params: []Param{
		{Name: "x", Prop: "x", In: InQuery, Style: StyleForm, Explode: true},
		{Name: "Authorization", Prop: "authorization", In: InHeader, Style: StyleSimple},
		{Name: "s", Prop: "s", In: InCookie, Style: StyleForm, Explode: true},
	}}
	args := `{"x":"1","authorization":"Bearer from-the-program","s":"v"}`
	for _, tt := range []struct {
		name    string
		auth    *Auth
		headers map[string]string
		want    map[string]string // header (or "URI") -> value
	}{
		{"none", nil, nil, map[string]string{"URI": "/a?x=1", "Authorization": "Bearer from-the-program", "Cookie": "s=v"}},
		{"bearer", &Auth{Bearer: "b-token"}, nil, map[string]string{"Authorization": "Bearer b-token"}},
		{"basic", &Auth{Basic: &BasicAuth{Username: "ann", Password: "p@ss:word"}}, nil, map[string]string{"Authorization": "Basic " + basicCredential("ann", "p@ss:word")}},
		{"api key header", &Auth{APIKey: &APIKey{In: KeyInHeader, Name: "X-Api-Key", Value: "k-header"}}, nil, map[string]string{"X-Api-Key": "k-header", "Authorization": "Bearer from-the-program"}},
		{"api key, header by default", &Auth{APIKey: &APIKey{Name: "X-Key", Value: "k-default"}}, nil, map[string]string{"X-Key": "k-default"}},
		{"api key query", &Auth{APIKey: &APIKey{In: KeyInQuery, Name: "api key", Value: "k/query&1"}}, nil, map[string]string{"URI": "/a?x=1&api%20key=k%2Fquery%261"}},
		{"api key cookie", &Auth{APIKey: &APIKey{In: KeyInCookie, Name: "sid", Value: "k-cookie"}}, nil, map[string]string{"Cookie": "s=v; sid=k-cookie"}},
		{"headers", nil, map[string]string{"X-Tenant": "t1", "Accept": "application/vnd.x+json", "authorization": "Token from-config"}, map[string]string{"X-Tenant": "t1", "Accept": "application/vnd.x+json", "Authorization": "Token from-config"}},
		{"headers and bearer", &Auth{Bearer: "b-token"}, map[string]string{"Authorization": "Token from-config"}, map[string]string{"Authorization": "Bearer b-token", "Accept": defaultAccept}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCaller(t, rec.srv.URL, func(cfg *Config) { cfg.Auth, cfg.Headers = tt.auth, tt.headers })
			callOK(t, c, op, args)
			got := rec.last(t)
			have := map[string]string{}
			for k := range tt.want {
				if k == "URI" {
					have[k] = got.URI
				} else {
					have[k] = strings.Join(got.Header.Values(k), " | ")
				}
			}
			if diff := cmp.Diff(tt.want, have); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallerConfig checks that a caller refuses unusable settings with an
// error naming the field and never the secret.
func TestCallerConfig(t *testing.T) {
	base := "https://api.example.com"
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no base", Config{}, "base URL: not an absolute http(s) URL"},
		{"relative base", Config{BaseURL: "/v1"}, "base URL: not an absolute http(s) URL"},
		{"two kinds", Config{BaseURL: base, Auth: &Auth{Bearer: "secret-1", Basic: &BasicAuth{}}}, "auth: exactly one of bearer, basic, api_key and oauth2 must be set (2 are)"},
		{"bearer line break", Config{BaseURL: base, Auth: &Auth{Bearer: "secret-1\nX: y"}}, "auth.bearer: the value holds a control character or line break"},
		{"api key in", Config{BaseURL: base, Auth: &Auth{APIKey: &APIKey{In: "body", Name: "k", Value: "secret-1"}}}, `auth.api_key.in: "body" is not one of header, query, cookie`},
		{"api key header name", Config{BaseURL: base, Auth: &Auth{APIKey: &APIKey{In: KeyInHeader, Name: "X Key", Value: "secret-1"}}}, `auth.api_key.name: header name "X Key" is not a valid HTTP token`},
		{"api key cookie value", Config{BaseURL: base, Auth: &Auth{APIKey: &APIKey{In: KeyInCookie, Name: "k", Value: "secret-1; x=y"}}}, "auth.api_key.value: a cookie value cannot hold ';', white space or line breaks"},
		{"api key empty", Config{BaseURL: base, Auth: &Auth{APIKey: &APIKey{In: KeyInQuery, Name: "k"}}}, "auth.api_key.value: empty"},
		{"token url", Config{BaseURL: base, Auth: &Auth{OAuth2: &OAuth2{TokenURL: "/token", ClientID: "c", ClientSecret: "secret-1"}}}, "auth.oauth2.token_url: not an absolute http(s) URL"},
		{"header value", Config{BaseURL: base, Headers: map[string]string{"X-Key": "secret-1\r\n"}}, "headers: header X-Key: the value holds a control character"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := checkedCaller(tt.cfg)
			if err == nil {
				c.close()
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret-1") {
				t.Errorf("error %q, want %q and no secret", err, tt.want)
			}
		})
	}
}

// TestCredentialNotShadowed checks that a program cannot send a second
// value of what the configuration sends: a query parameter or cookie
// named as the API key (or as a configured cookie), however a server may
// read the name, is refused before anything is sent, naming it; a header
// named as a configured one is left out, the configuration's sent alone.
// Servers that take the first of repeated values would otherwise take the
// program's (?key=stolen&key=<key>, Cookie: sid=stolen; sid=<key>).
func TestCredentialNotShadowed(t *testing.T) {
	rec := newRecorder(t, nil)
	query := func(cfg *Config) { cfg.Auth = &Auth{APIKey: &APIKey{In: KeyInQuery, Name: "key", Value: "k-query"}} }
	cookie := func(cfg *Config) { cfg.Auth = &Auth{APIKey: &APIKey{In: KeyInCookie, Name: "sid", Value: "k-cookie"}} }
	configCookie := func(cfg *Config) { cfg.Headers = map[string]string{"Cookie": "a=1; session=s-config"} }
	op := &Operation{Method: "GET", Path: "/a", Params: []Param{
		{Name: "key", Prop: "key", In: InQuery, Style: StyleForm, Explode: true},
		{Name: "filter", Prop: "filter", In: InQuery, Style: StyleForm, Explode: true},
		{Name: "sid", Prop: "sid", In: InCookie, Style: StyleForm, Explode: true},
		{Name: "session", Prop: "session", In: InCookie, Style: StyleForm, Explode: true},
	}}
	for _, tt := range []struct {
		name string
		cfg  func(*Config)
		call string // an operation's arguments, or request's ("request" ...)
		want string
	}{
		{"query parameter", query, `{"key":"stolen"}`, `query parameter "key": the connector sends the configured API key under this name`},
		{"exploded object member", query, `{"filter":{"KEY":"stolen"}}`, `query parameter "KEY"`},
		{"request query", query, `request {"method":"GET","path":"/a","query":{"key":"stolen"}}`, `query parameter "key"`},
		{"request path, encoded", query, `request {"method":"GET","path":"/a?x=1&k%65y=stolen"}`, `query parameter "k%65y"`},
		{"request path, semicolon", query, `request {"method":"GET","path":"/a?x=1;key=stolen"}`, `query parameter "key"`},
		{"cookie parameter", cookie, `{"sid":"stolen"}`, `cookie "sid": the configuration sends a cookie of this name`},
		{"request Cookie header", cookie, `request {"method":"GET","path":"/a","headers":{"Cookie":"a=1; Sid=stolen"}}`, `cookie "Sid"`},
		{"configured Cookie header", configCookie, `{"session":"stolen"}`, `cookie "session"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCaller(t, rec.srv.URL, tt.cfg)
			sent := len(rec.requests())
			var res connectors.Result
			var err error
			if args, ok := strings.CutPrefix(tt.call, "request "); ok {
				res, err = requestOf(context.Background(), c, json.RawMessage(args))
			} else {
				res, err = c.call(context.Background(), op, json.RawMessage(tt.call))
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.requests(); len(got) > sent {
				t.Errorf("sent %s with Cookie %q; want nothing sent", got[len(got)-1].URI, got[len(got)-1].Header.Values("Cookie"))
			}
			if !res.IsError || !strings.Contains(res.Message, tt.want) {
				t.Errorf("got %q, want an error with %q", res.Message, tt.want)
			}
		})
	}

	// Headers: the configured ones are sent, the program's of the same
	// name, or of one a server may take for it, are not.
	c := newTestCaller(t, rec.srv.URL, func(cfg *Config) {
		cfg.Auth = &Auth{APIKey: &APIKey{In: KeyInHeader, Name: "X-Api-Key", Value: "k-header"}}
		cfg.Headers = map[string]string{"X-Tenant": "t-config"}
	})
	hop := &Operation{Method: "GET", Path: "/a", Params: []Param{
		{Name: "x-tenant", Prop: "tenant", In: InHeader, Style: StyleSimple},
		{Name: "X-API-KEY", Prop: "key", In: InHeader, Style: StyleSimple},
	}}
	callOK(t, c, hop, `{"tenant":"t-program","key":"stolen"}`)
	requestOK(t, c, `{"method":"GET","path":"/a","headers":{"X_Tenant":"t-program","x_api_key":"stolen","X-Api.Key":"stolen"}}`)
	for _, got := range rec.requests()[len(rec.requests())-2:] {
		want := http.Header{"X-Api-Key": {"k-header"}, "X-Tenant": {"t-config"}}
		for k := range got.Header {
			if k != "X-Api-Key" && k != "X-Tenant" && (strings.Contains(strings.ToLower(k), "key") || strings.Contains(strings.ToLower(k), "tenant")) {
				want[k] = nil
			}
		}
		have := http.Header{}
		for k := range want {
			have[k] = got.Header[k]
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("%s: headers (-want +got):\n%s", got.URI, diff)
		}
	}
}

// TestRedirectQueryKey checks that a followed redirect carries the
// configured query API key, once, and no other value of its name: a
// program cannot have an open redirect of the API send another key in
// its place.
func TestRedirectQueryKey(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := newTestCaller(t, rec.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{APIKey: &APIKey{In: KeyInQuery, Name: "key", Value: "k-query"}} })
	for _, tt := range []struct{ to, want string }{
		{"/a", "/a?key=k-query"},
		{"/a?x=1&key=k-query", "/a?x=1&key=k-query"},
		{"/a?key=stolen&x=1", "/a?x=1&key=k-query"},
		{"/a?KEY=stolen", "/a?key=k-query"},
	} {
		args, _ := json.Marshal(map[string]any{"method": "GET", "path": "/go", "query": map[string]string{"to": tt.to}})
		requestOK(t, c, string(args))
		if got := rec.last(t).URI; got != tt.want {
			t.Errorf("redirect to %s: the API got %s, want %s", tt.to, got, tt.want)
		}
	}
}
