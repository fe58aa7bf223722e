package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// echo answers with everything the request carried that could hold a
// credential: in a JSON body, in a response header, and in the message of
// an error when the query asks for a status.
func echo(w http.ResponseWriter, r *http.Request) {
	seen := strings.Join([]string{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Cookie"), r.Header.Get("X-Config"), r.URL.RawQuery}, " | ")
	w.Header().Set("X-Echo", seen)
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Has("fail") {
		w.WriteHeader(http.StatusForbidden)
	}
	b, _ := json.Marshal(map[string]any{"message": "you sent " + seen, "headers": r.Header, "query": r.URL.RawQuery})
	_, _ = w.Write(b)
}

// TestScrubbing checks that no credential an API echoes back reaches the
// program: not in a value, an error message, an error's body, or the
// headers request returns; for every kind of credential and for the
// connector's headers.
func TestScrubbing(t *testing.T) {
	te := newTokenEndpoint(t, "3600")
	for _, tt := range []struct {
		name    string
		auth    *Auth
		headers map[string]string
		secrets []string // what the API must have received, and must not come back
	}{
		{"bearer", &Auth{Bearer: "bearer-secret-1"}, nil, []string{"bearer-secret-1"}},
		{"basic", &Auth{Basic: &BasicAuth{Username: "ann", Password: "basic-secret-2"}}, nil, []string{basicCredential("ann", "basic-secret-2")}},
		{"api key header", &Auth{APIKey: &APIKey{In: KeyInHeader, Name: "X-Api-Key", Value: "key-secret-3"}}, nil, []string{"key-secret-3"}},
		{"api key query", &Auth{APIKey: &APIKey{In: KeyInQuery, Name: "key", Value: "key secret/4"}}, nil, []string{"key%20secret%2F4"}},
		{"api key cookie", &Auth{APIKey: &APIKey{In: KeyInCookie, Name: "sid", Value: "cookie-secret-5"}}, nil, []string{"cookie-secret-5"}},
		{"oauth2", &Auth{OAuth2: &OAuth2{TokenURL: te.srv.URL, ClientID: "app", ClientSecret: "client-secret-6"}}, nil, []string{"tok-"}},
		{"headers", nil, map[string]string{"X-Config": "config-secret-7"}, []string{"config-secret-7"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, echo)
			s := scrub.New()
			c := newTestCaller(t, api.srv.URL, func(cfg *Config) { cfg.Auth, cfg.Headers, cfg.Scrubber = tt.auth, tt.headers, s })
			op := &Operation{Method: "GET", Path: "/echo", Params: []Param{{Name: "fail", Prop: "fail", In: InQuery, Style: StyleForm, Explode: true}}}
			var out []string // everything the program could see
			for _, args := range []string{`{}`, `{"fail":1}`} {
				res, err := c.call(context.Background(), op, json.RawMessage(args))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(res.Value), res.Message)
				res, err = requestOf(context.Background(), c, json.RawMessage(`{"method":"GET","path":"/echo","query":`+args+`}`))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(res.Value), res.Message)
			}
			sent := ""
			for _, r := range api.requests() {
				sent += r.URI + " " + strings.Join(r.Header.Values("Authorization"), " ") + " " + r.Header.Get("X-Api-Key") + " " + r.Header.Get("Cookie") + " " + r.Header.Get("X-Config")
			}
			all := strings.Join(out, "\n")
			for _, secret := range tt.secrets {
				if !strings.Contains(sent, secret) {
					t.Errorf("the API never got %q: %s", secret, sent)
				}
				if strings.Contains(all, secret) {
					t.Errorf("%q reached the program:\n%s", secret, all)
				}
			}
			if !strings.Contains(all, scrub.Placeholder) {
				t.Errorf("nothing was scrubbed:\n%s", all)
			}
		})
	}
}

// TestScrubTransportError checks that a transport error, whose message
// holds the request URL, does not reveal a query API key.
func TestScrubTransportError(t *testing.T) {
	dead := newRecorder(t, nil)
	dead.srv.Close() // nothing listens there any more
	const key = "query-secret-8"
	c := newTestCaller(t, dead.srv.URL, func(cfg *Config) {
		cfg.Auth = &Auth{APIKey: &APIKey{In: KeyInQuery, Name: "api_key", Value: key}}
	})
	_, err := c.call(context.Background(), &Operation{Method: "GET", Path: "/x"}, nil)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "api_key="+scrub.Placeholder) {
		t.Errorf("call error %v", err)
	}
	_, err = requestOf(context.Background(), c, json.RawMessage(`{"method":"GET","path":"/x"}`))
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "request GET: ") {
		t.Errorf("request error %v", err)
	}
}

// TestScrubBeforeTheCut checks that an API's error message, and a
// redirect's Location, are scrubbed before they are cut to a line: a cut
// through a secret would leave its head unrecognised in the message.
func TestScrubBeforeTheCut(t *testing.T) {
	const key = "cut-secret-13"
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"message", answerWith(400, "application/json", `{"message":"`+strings.Repeat("a", maxMessage-6)+` `+key+`"}`)},
		{"location", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "https://elsewhere.example/"+strings.Repeat("a", maxMessage-30)+"?k="+key)
			w.WriteHeader(http.StatusFound)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, tt.handler)
			c := newTestCaller(t, api.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{Bearer: key} })
			res, err := c.call(context.Background(), &Operation{Method: "GET", Path: "/x"}, nil)
			if err != nil || !res.IsError {
				t.Fatalf("call = %+v, %v; want an error result", res, err)
			}
			if strings.Contains(res.Message, key[:4]) {
				t.Errorf("message %q holds the head of the secret", res.Message)
			}
		})
	}
}

// TestScrubLeavesOtherValues checks that scrubbing leaves a value without a
// secret as it is.
func TestScrubLeavesOtherValues(t *testing.T) {
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"a":"plain"}`)
	})
	c := newTestCaller(t, api.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{Bearer: "bearer-secret-9"} })
	if res := callOK(t, c, &Operation{Method: "GET", Path: "/x"}, `{}`); string(res.Value) != `{"a":"plain"}` {
		t.Errorf("value %s", res.Value)
	}
}

// TestScrubHeaders checks which configured headers are secrets: any but
// those describing the exchange, whose values answers may hold.
func TestScrubHeaders(t *testing.T) {
	api := newRecorder(t, answerWith(200, "application/json", `["application/vnd.github+json","2022-11-28","header-secret-10","go-agent-11"]`))
	c := newTestCaller(t, api.srv.URL, func(cfg *Config) {
		cfg.Headers = map[string]string{"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "X-Key": "header-secret-10", "User-Agent": "go-agent-11"}
	})
	res := callOK(t, c, &Operation{Method: "GET", Path: "/x"}, `{}`)
	if want := `["application/vnd.github+json","2022-11-28","` + scrub.Placeholder + `","go-agent-11"]`; string(res.Value) != want {
		t.Errorf("value %s, want %s", res.Value, want)
	}
}

// TestScrubBinaryAnswer checks that a credential an API echoes in a
// binary answer, which the program gets as base64, does not reach it,
// wherever it starts in the answer.
func TestScrubBinaryAnswer(t *testing.T) {
	const token = "binary-echo-secret-12"
	for before := range 3 {
		api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(append(append(bytes.Repeat([]byte{0xff}, before), r.Header.Get("Authorization")...), 0xfe, 0xfd))
		})
		c := newTestCaller(t, api.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{Bearer: token} })
		res := callOK(t, c, &Operation{Method: "GET", Path: "/x"}, `{}`)
		if !strings.Contains(string(res.Value), scrub.Placeholder) || scrub.New(token).Contains(string(res.Value)) {
			t.Errorf("%d bytes before the token: the program got %s", before, res.Value)
		}
	}
}

// TestAcceptEncodingRefused checks that a program cannot ask for a
// compressed answer, which the connector could not check for its
// credentials: request() and an operation's header parameter are refused,
// naming the header, and nothing is sent; a configured header is refused
// at start.
func TestAcceptEncodingRefused(t *testing.T) {
	api := newRecorder(t, nil)
	c := newTestCaller(t, api.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{Bearer: "gzip-secret-13"} })
	const want = "Accept-Encoding cannot be set: the connector reads every answer to keep its credentials out of what it returns, and it cannot read a compressed one"
	res, err := requestOf(context.Background(), c, json.RawMessage(`{"method":"GET","path":"/x","headers":{"accept-encoding":"gzip"}}`))
	if err != nil || !res.IsError || !strings.Contains(res.Message, "request: headers.accept-encoding: "+want) {
		t.Errorf("request: %+v %v", res, err)
	}
	op := &Operation{Method: "GET", Path: "/x", Params: []Param{{Name: "Accept-Encoding", Prop: "enc", In: InHeader, Style: StyleSimple}}}
	res, err = c.call(context.Background(), op, json.RawMessage(`{"enc":"br"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Message, `input "enc" (header parameter "Accept-Encoding"): `+want) {
		t.Errorf("header parameter: %+v %v", res, err)
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	u, _ := url.Parse(api.srv.URL)
	if _, err := checkedCaller(Config{BaseURL: u.String(), Headers: map[string]string{"Accept-Encoding": "gzip"}}); err == nil || !strings.Contains(err.Error(), "headers: "+want) {
		t.Errorf("configured header: %v", err)
	}
}
