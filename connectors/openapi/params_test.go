package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// The values of the style table of the OpenAPI specification.
const (
	specString = `"blue"`
	specArray  = `["blue","black","brown"]`
	specObject = `{"R":100,"G":200,"B":150}`
)

// callOK calls op and fails the test unless the call succeeded.
func callOK(t *testing.T, c *caller, op *Operation, args string) connectors.Result {
	t.Helper()
	res, err := c.call(context.Background(), op, json.RawMessage(args))
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if res.IsError {
		t.Fatalf("call failed: %s", res.Message)
	}
	return res
}

// TestStyles checks every style and explode combination of the
// specification's style table, for each location, with a string, an array
// and an object, by what a server receives.
func TestStyles(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL+"/api/")
	for _, tt := range []struct {
		in, style string
		explode   bool
		value     string
		want      string // the path after /api/c/, the query, or the header
	}{
		{InPath, StyleSimple, false, specString, "blue"},
		{InPath, StyleSimple, false, specArray, "blue,black,brown"},
		{InPath, StyleSimple, false, specObject, "R,100,G,200,B,150"},
		{InPath, StyleSimple, true, specString, "blue"},
		{InPath, StyleSimple, true, specArray, "blue,black,brown"},
		{InPath, StyleSimple, true, specObject, "R=100,G=200,B=150"},
		{InPath, StyleLabel, false, specString, ".blue"},
		{InPath, StyleLabel, false, specArray, ".blue,black,brown"},
		{InPath, StyleLabel, false, specObject, ".R,100,G,200,B,150"},
		{InPath, StyleLabel, true, specString, ".blue"},
		{InPath, StyleLabel, true, specArray, ".blue.black.brown"},
		{InPath, StyleLabel, true, specObject, ".R=100.G=200.B=150"},
		{InPath, StyleMatrix, false, `""`, ";color"},
		{InPath, StyleMatrix, false, specString, ";color=blue"},
		{InPath, StyleMatrix, false, specArray, ";color=blue,black,brown"},
		{InPath, StyleMatrix, false, specObject, ";color=R,100,G,200,B,150"},
		{InPath, StyleMatrix, true, specString, ";color=blue"},
		{InPath, StyleMatrix, true, specArray, ";color=blue;color=black;color=brown"},
		{InPath, StyleMatrix, true, specObject, ";R=100;G=200;B=150"},

		{InQuery, StyleForm, false, `""`, "color="},
		{InQuery, StyleForm, false, specString, "color=blue"},
		{InQuery, StyleForm, false, specArray, "color=blue,black,brown"},
		{InQuery, StyleForm, false, specObject, "color=R,100,G,200,B,150"},
		{InQuery, StyleForm, true, `""`, "color="},
		{InQuery, StyleForm, true, specString, "color=blue"},
		{InQuery, StyleForm, true, specArray, "color=blue&color=black&color=brown"},
		{InQuery, StyleForm, true, specObject, "R=100&G=200&B=150"},
		{InQuery, StyleForm, true, `[]`, ""},
		{InQuery, StyleForm, false, `{}`, ""},
		{InQuery, StyleSpaceDelimited, false, specArray, "color=blue%20black%20brown"},
		{InQuery, StyleSpaceDelimited, false, specObject, "color=R%20100%20G%20200%20B%20150"},
		{InQuery, StyleSpaceDelimited, true, specArray, "color=blue&color=black&color=brown"},
		{InQuery, StylePipeDelimited, false, specArray, "color=blue%7Cblack%7Cbrown"},
		{InQuery, StylePipeDelimited, false, specObject, "color=R%7C100%7CG%7C200%7CB%7C150"},
		{InQuery, StyleTab, false, specArray, "color=blue%09black%09brown"},
		{InQuery, StyleDeepObject, true, specObject, "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"},
		{InQuery, StyleDeepObject, true, `{"a":{"b":"x y"},"l":[1,2],"n":null,"e":{}}`, "color%5Ba%5D%5Bb%5D=x%20y&color%5Bl%5D%5B0%5D=1&color%5Bl%5D%5B1%5D=2"},
		{InQuery, StyleDeepObject, true, specString, "color=blue"},

		{InHeader, StyleSimple, false, specString, "blue"},
		{InHeader, StyleSimple, false, specArray, "blue,black,brown"},
		{InHeader, StyleSimple, false, specObject, "R,100,G,200,B,150"},
		{InHeader, StyleSimple, true, specString, "blue"},
		{InHeader, StyleSimple, true, specArray, "blue,black,brown"},
		{InHeader, StyleSimple, true, specObject, "R=100,G=200,B=150"},

		{InCookie, StyleForm, false, specString, "color=blue"},
		{InCookie, StyleForm, false, specArray, "color=blue,black,brown"},
		{InCookie, StyleForm, false, specObject, "color=R,100,G,200,B,150"},
		{InCookie, StyleForm, true, specString, "color=blue"},
		{InCookie, StyleForm, true, specArray, "color=blue; color=black; color=brown"},
		{InCookie, StyleForm, true, specObject, "R=100; G=200; B=150"},
	} {
		name := tt.in + "/" + tt.style + "/" + map[bool]string{false: "flat", true: "explode"}[tt.explode] + "/" + tt.value
		t.Run(name, func(t *testing.T) {
			op := &Operation{Method: "GET", Path: "/c", Params: []Param{{Name: "color", Prop: "color", In: tt.in, Style: tt.style, Explode: tt.explode, Required: tt.in == InPath}}}
			if tt.in == InPath {
				op.Path = "/c/{color}"
			}
			callOK(t, c, op, `{"color":`+tt.value+`}`)
			got := rec.last(t)
			switch tt.in {
			case InPath:
				if want := "/api/c/" + tt.want; got.URI != want {
					t.Errorf("path %q, want %q", got.URI, want)
				}
			case InQuery:
				_, query, _ := strings.Cut(got.URI, "?")
				if query != tt.want {
					t.Errorf("query %q, want %q", query, tt.want)
				}
			case InHeader:
				if h := got.Header.Values("color"); !cmp.Equal(h, []string{tt.want}) {
					t.Errorf("header %q, want %q", h, tt.want)
				}
			case InCookie:
				if h := got.Header.Get("Cookie"); h != tt.want {
					t.Errorf("cookie %q, want %q", h, tt.want)
				}
			}
		})
	}
}

// TestEncoding checks how values are percent-encoded: reserved characters,
// allowReserved, multi-segment path parameters, numbers as written, JSON
// parameters, and parameters left out.
func TestEncoding(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	path := func(p Param) *Operation {
		p.In, p.Required = InPath, true
		if p.Prop == "" {
			p.Prop = p.Name
		}
		return &Operation{Method: "GET", Path: "/r/{" + p.Name + "}/x", Params: []Param{p}}
	}
	query := func(ps ...Param) *Operation {
		for i := range ps {
			ps[i].In = InQuery
			if ps[i].Prop == "" {
				ps[i].Prop = ps[i].Name
			}
			if ps[i].Style == "" {
				ps[i].Style, ps[i].Explode = StyleForm, true
			}
		}
		return &Operation{Method: "GET", Path: "/q", Params: ps}
	}
	for _, tt := range []struct {
		name string
		op   *Operation
		args string
		want string // the request target
	}{
		{"path reserved", path(Param{Name: "id"}), `{"id":"a/b c,d?#%;=é"}`, "/r/a%2Fb%20c%2Cd%3F%23%25%3B%3D%C3%A9/x"},
		{"path item delimiter", path(Param{Name: "id"}), `{"id":["a,b","c"]}`, "/r/a%2Cb,c/x"},
		{"path number as written", path(Param{Name: "id"}), `{"id":12345678901234567890}`, "/r/12345678901234567890/x"},
		{"path dots inside", path(Param{Name: "id"}), `{"id":"v1.2..3"}`, "/r/v1.2..3/x"},
		{"multi-segment", path(Param{Name: "ref", MultiSegment: true}), `{"ref":"heads/feat x/y%z"}`, "/r/heads/feat%20x/y%25z/x"},
		{"prop differs from name", path(Param{Name: "id", Prop: "id_path"}), `{"id_path":"7","id":"8"}`, "/r/7/x"},
		{"query reserved", query(Param{Name: "q"}), `{"q":"a b&c=d/e+f~"}`, "/q?q=a%20b%26c%3Dd%2Fe%2Bf~"},
		{"query allowReserved", query(Param{Name: "q", AllowReserved: true}), `{"q":"a/b?c=d&e+f %41 %zz#[x],;:@!$'()*"}`, "/q?q=a/b?c=d%26e%2Bf%20%41%20%25zz%23%5Bx%5D,;:@!$'()*"},
		{"query name encoded", query(Param{Name: "filter[name]"}), `{"filter[name]":"x"}`, "/q?filter%5Bname%5D=x"},
		{"query numbers and booleans", query(Param{Name: "n"}, Param{Name: "f"}, Param{Name: "b"}), `{"n":1e3,"f":-0.50,"b":false}`, "/q?n=1e3&f=-0.50&b=false"},
		{"query JSON parameter", query(Param{Name: "filter", JSON: true}), `{"filter":{"a":[1,"x y"]}}`, "/q?filter=%7B%22a%22%3A%5B1%2C%22x%20y%22%5D%7D"},
		{"query null and absent omitted", query(Param{Name: "a"}, Param{Name: "b"}, Param{Name: "c"}), `{"a":null,"c":"z"}`, "/q?c=z"},
		{"query nested item as JSON", query(Param{Name: "a"}), `{"a":[{"k":1},[2]]}`, "/q?a=%7B%22k%22%3A1%7D&a=%5B2%5D"},
		{"query declared order", query(Param{Name: "b"}, Param{Name: "a"}), `{"a":"1","b":"2"}`, "/q?b=2&a=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			callOK(t, c, tt.op, tt.args)
			if got := rec.last(t).URI; got != tt.want {
				t.Errorf("sent %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHeaderNotEncoded checks that header values travel as they are.
func TestHeaderNotEncoded(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	op := &Operation{Method: "GET", Path: "/h", Params: []Param{{Name: "X-Thing", Prop: "thing", In: InHeader, Style: StyleSimple}}}
	callOK(t, c, op, `{"thing":"a b/c%20é"}`)
	if got := rec.last(t).Header.Get("X-Thing"); got != "a b/c%20é" {
		t.Errorf("header %q", got)
	}
}

// TestRefused checks arguments a call cannot send: the call fails with a
// message naming the input, and nothing reaches the server.
func TestRefused(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	pathOp := func(p Param) *Operation {
		p.Name, p.Prop, p.In, p.Required = "id", "id", InPath, true
		return &Operation{Method: "GET", Path: "/r/{id}", Params: []Param{p}}
	}
	for _, tt := range []struct {
		name string
		op   *Operation
		args string
		want string // in the message
	}{
		{"dot", pathOp(Param{}), `{"id":"."}`, `path parameter "id": the value makes the path segment ".", which would change the endpoint called`},
		{"dot dot", pathOp(Param{}), `{"id":".."}`, `makes the path segment ".."`},
		{"dot dot in segments", pathOp(Param{MultiSegment: true}), `{"id":"a/../b"}`, `makes the path segment ".."`},
		{"dot in segments", pathOp(Param{MultiSegment: true}), `{"id":"./b"}`, `makes the path segment "."`},
		{"dot dot and an encoded slash", pathOp(Param{}), `{"id":"../admin"}`, `makes the path segment ".."`},
		{"dot dot and a backslash", pathOp(Param{}), `{"id":"..\\admin"}`, `makes the path segment ".."`},
		{"label makes dot dot", pathOp(Param{Style: StyleLabel}), `{"id":"."}`, `makes the path segment ".."`},
		{"empty", pathOp(Param{}), `{"id":""}`, `path parameter "id": the value is empty`},
		{"empty array", pathOp(Param{}), `{"id":[]}`, `the value is empty`},
		{"missing", pathOp(Param{}), `{}`, `path parameter "id" is required`},
		{"null", pathOp(Param{}), `{"id":null}`, `path parameter "id" is required`},
		{"undeclared", &Operation{Method: "GET", Path: "/r/{x}"}, `{}`, `no path parameter "x" is declared`},
		{"query required", &Operation{Method: "GET", Path: "/q", Params: []Param{{Name: "q", Prop: "query_q", In: InQuery, Required: true}}}, `{}`, `input "query_q" (query parameter "q") is required`},
		{"header line break", &Operation{Method: "GET", Path: "/h", Params: []Param{{Name: "X-A", Prop: "a", In: InHeader}}}, `{"a":"x\r\nEvil: 1"}`, `input "a" (header parameter "X-A"): header X-A: the value holds a control character`},
		{"not an object", pathOp(Param{}), `[1]`, `the input must be an object`},
		{"too deep", &Operation{Method: "GET", Path: "/q", Params: []Param{{Name: "q", Prop: "q", In: InQuery}}}, `{"q":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, `nested deeper than 64`},
		{"URL too long", &Operation{Method: "GET", Path: "/q", Params: []Param{{Name: "q", Prop: "q", In: InQuery}}}, `{"q":"` + strings.Repeat("x", maxURL) + `"}`, `over the limit of 65536 bytes`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rec.requests())
			res, err := c.call(context.Background(), tt.op, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if !res.IsError || !strings.Contains(res.Message, tt.want) {
				t.Errorf("result %+v, want an error with %q", res, tt.want)
			}
			if !strings.HasPrefix(res.Message, tt.op.Method+" "+tt.op.Path+": ") {
				t.Errorf("message %q does not name the operation", res.Message)
			}
			if n := len(rec.requests()); n != before {
				t.Errorf("the server got %d requests", n-before)
			}
		})
	}
}

// TestServer checks that an operation's server overrides the base URL,
// relative ones resolved against it.
func TestServer(t *testing.T) {
	rec := newRecorder(t, nil)
	other := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL+"/api/v1")
	for i, tt := range []struct {
		server string
		rec    *recorder
		want   string
	}{
		{"", rec, "/api/v1/p"},
		{"", rec, "/api/v1/p"}, // a path without its leading '/' (below)
		{"/v2", rec, "/v2/p"},
		{"v3/", rec, "/api/v3/p"},
		{other.srv.URL + "/up", other, "/up/p"},
	} {
		path := "/p"
		if i == 1 {
			path = "p"
		}
		callOK(t, c, &Operation{Method: "GET", Path: path, Server: tt.server}, `{}`)
		if got := tt.rec.last(t).URI; got != tt.want {
			t.Errorf("server %q: sent %q, want %q", tt.server, got, tt.want)
		}
	}
}

// TestManyParameters: a document may declare any number of parameters.
// Deriving them compared each with all those before it (this test took
// 11 s, 100,000 parameters nine minutes), and a call looked each path
// placeholder up among all of them (250 placeholders and 100,000 query
// parameters: 220 ms a call, 0.7 ms now): both are linear in the
// parameters now, and -timeout catches a regression.
func TestManyParameters(t *testing.T) {
	var path strings.Builder
	var params []string
	for i := range 20000 {
		params = append(params, fmt.Sprintf(`{"name":"q%d","in":"query"}`, i))
	}
	args := map[string]string{}
	for i := range 250 { // as many placeholders as a path of 1024 bytes holds
		name := fmt.Sprintf("%c%c", 'A'+i/26, 'a'+i%26)
		fmt.Fprintf(&path, "{%s}", name)
		params = append(params, fmt.Sprintf(`{"name":%q,"in":"path","required":true}`, name))
		args[name] = "v"
	}
	doc := `{"openapi":"3.0.0","info":{"title":"many","version":"1"},"paths":{"/` + path.String() +
		`":{"get":{"operationId":"many","parameters":[` + strings.Join(params, ",") + `],"responses":{"200":{"description":"ok"}}}}}}`
	rec := newRecorder(t, nil)
	c, err := New(context.Background(), Config{Name: "many", Document: writeDoc(t, doc), BaseURL: rec.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, _ := json.Marshal(args)
	for range 5 {
		if res, err := c.Call(context.Background(), "many", raw); err != nil || res.IsError {
			t.Fatal(err, res.Message)
		}
	}
	if got, want := rec.last(t).URI, "/"+strings.Repeat("v", 250); got != want {
		t.Errorf("request URI %.100s, want %.100s", got, want)
	}
}

// TestReservedHeaders checks that neither a document's header parameter
// nor request's headers can set a header that the HTTP client writes
// itself, a hop-by-hop header, a proxy credential, Cookie (a document's
// header parameter: cookies are cookie parameters) or a method override:
// the parameters are left out with a warning naming the operation, and
// request refuses them. Through a proxy (httputil's), a program's
// "Connection: X-Api-Key" would have the configured API key dropped on
// the way to the API.
func TestReservedHeaders(t *testing.T) {
	api := newRecorder(t, nil)
	target, _ := url.Parse(api.srv.URL)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(proxy.Close)
	reserved := []string{"Cookie", "Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "TE", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "X-HTTP-Method-Override", "X_Http_Method"}
	var params, args []string
	for _, h := range append(reserved, "X-Request-Id") {
		params = append(params, `{"name":"`+h+`","in":"header","schema":{"type":"string"}}`)
		args = append(args, `"`+h+`":"X-Api-Key"`)
	}
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"operationId":"getA",
	"parameters":[` + strings.Join(params, ",") + `],"responses":{"200":{"description":"ok"}}}}}}`
	c, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, doc), BaseURL: proxy.URL,
		Auth: &Auth{APIKey: &APIKey{In: KeyInHeader, Name: "X-Api-Key", Value: "k-header"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	warnings := strings.Join(c.Capabilities().Diagnostics, "\n")
	for _, h := range reserved {
		if want := fmt.Sprintf("GET /a: header parameter %q: a program cannot", h); !strings.Contains(warnings, want) {
			t.Errorf("no warning %q in:\n%s", want, warnings)
		}
	}
	var kept []string
	for _, p := range c.ops["getA"].Params {
		kept = append(kept, p.Name)
	}
	if diff := cmp.Diff([]string{"X-Request-Id"}, kept); diff != "" {
		t.Errorf("parameters kept (-want +got):\n%s", diff)
	}
	res, err := c.Call(context.Background(), "getA", json.RawMessage(`{`+strings.Join(args, ",")+`}`))
	if err != nil || res.IsError {
		t.Fatalf("call: %v %s", err, res.Message)
	}
	got := api.last(t)
	if got.Header.Get("X-Api-Key") != "k-header" || got.Header.Get("X-Request-Id") != "X-Api-Key" {
		t.Errorf("the API got X-Api-Key %q, X-Request-Id %q; want k-header and X-Api-Key", got.Header.Get("X-Api-Key"), got.Header.Get("X-Request-Id"))
	}
	for _, h := range reserved {
		if vs := got.Header.Values(h); slices.Contains(vs, "X-Api-Key") {
			t.Errorf("the API got %s: %q", h, vs)
		}
	}

	sent := len(api.requests())
	for _, h := range reserved[1:] { // request may send cookies
		res, err := c.Call(context.Background(), methodRequest, json.RawMessage(`{"method":"GET","path":"/a","headers":{"`+h+`":"X-Api-Key"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("request: headers.%s: a program cannot", h); !res.IsError || !strings.HasPrefix(res.Message, want) {
			t.Errorf("request with %s: got %q, want %q…", h, res.Message, want)
		}
	}
	if reqs := api.requests(); len(reqs) > sent {
		got := reqs[len(reqs)-1]
		t.Errorf("%d requests sent; the last with X-Api-Key %q", len(reqs)-sent, got.Header.Get("X-Api-Key"))
	}
}
