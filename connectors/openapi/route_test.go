package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// routesDocument has the operations TestRoute resolves request() calls
// to.
const routesDocument = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
  "/pets/{petId}":{"parameters":[{"name":"petId","in":"path","required":true,"schema":{"type":"string"}}],
    "get":{"operationId":"getPet","responses":{"200":{"description":"ok"}}},
    "delete":{"operationId":"deletePet","responses":{"204":{"description":"ok"}}}},
  "/users/me":{"get":{"operationId":"getMe","responses":{"200":{"description":"ok"}}}},
  "/users/{id}":{"get":{"operationId":"getUser","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},
  "/repos/{owner}/{repo}":{"get":{"operationId":"getRepo","parameters":[{"name":"owner","in":"path","required":true,"schema":{"type":"string"}},{"name":"repo","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},
  "/files/{path}.json":{"get":{"operationId":"getFile","parameters":[{"name":"path","in":"path","required":true,"x-multi-segment":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},
  "/tree/{path}":{"get":{"operationId":"getTree","parameters":[{"name":"path","in":"path","required":true,"x-multi-segment":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},
  "/search":{"post":{"operationId":"search","responses":{"200":{"description":"ok"}}}},
  "/admin/stats":{"get":{"operationId":"adminStats","responses":{"200":{"description":"ok"}}}},
  "/secret":{"get":{"operationId":"getSecret","responses":{"200":{"description":"ok"}}}},
  "/hidden":{"get":{"operationId":"getHidden","responses":{"200":{"description":"ok"}}}}
}}`

// TestRoute checks what a request() call reaches: the operations whose
// method and path template its path matches, in every form a server may
// read the path (case, an encoded '/', '\', repeated and trailing '/',
// path parameters after ';'),
// and its path relative to the base URL; a call that reaches an
// operation operations.exclude removed, or a path an exclude path
// pattern matches, is refused naming the path and the pattern, by Route
// and by Call, and nothing is sent.
func TestRoute(t *testing.T) {
	api := newRecorder(t, nil)
	c, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, routesDocument), BaseURL: api.srv.URL + "/v1",
		Exclude: []string{"path:/admin/*", "getSecret", "path:/internal/*"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, tt := range []struct {
		method, path string
		want         connectors.Route
		err          string
	}{
		{"GET", "/pets/1", connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/pets/1"}}, ""},
		{"get", "/PETS/1", connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/PETS/1"}}, ""},
		{"HEAD", "/pets/1", connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/pets/1"}}, ""},
		{"DELETE", "/pets/1", connectors.Route{Tools: []string{"deletePet"}, Paths: []string{"/pets/1"}, RequiresApproval: true}, ""},
		{"GET", "/pets//1/", connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/pets/1"}}, ""},
		{"GET", api.srv.URL + "/v1/pets/1", connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/pets/1"}}, ""},
		{"GET", "/users/me", connectors.Route{Tools: []string{"getMe", "getUser"}, Paths: []string{"/users/me"}}, ""},
		// A server that keeps %2F in its segment reads getRepo; one that
		// decodes it first reads four segments.
		{"GET", "/repos/a%2Fb/c", connectors.Route{Tools: []string{"getRepo"}, Paths: []string{"/repos/a/b/c"}}, ""},
		{"GET", "/pets\\1", connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/pets\\1", "/pets/1"}}, ""},
		{"GET", "/files/a/b/c.json", connectors.Route{Tools: []string{"getFile"}, Paths: []string{"/files/a/b/c.json"}}, ""},
		{"GET", "/tree/a/b", connectors.Route{Tools: []string{"getTree"}, Paths: []string{"/tree/a/b"}}, ""},
		{"POST", "/search", connectors.Route{Tools: []string{"search"}, Paths: []string{"/search"}, RequiresApproval: true}, ""},
		{"GET", "/nowhere", connectors.Route{Paths: []string{"/nowhere"}}, ""},
		{"PATCH", "/nowhere", connectors.Route{Paths: []string{"/nowhere"}, RequiresApproval: true}, ""},
		{"GET", "/admin/stats", connectors.Route{}, `GET /admin/stats: the path is excluded by the connector's operations.exclude pattern "path:/admin/*"`},
		{"GET", "/Admin/Stats", connectors.Route{}, `operations.exclude pattern "path:/admin/*"`},
		{"GET", "/admin%2Fstats", connectors.Route{}, `operations.exclude pattern "path:/admin/*"`},
		{"GET", "/internal/keys", connectors.Route{}, `GET /internal/keys: the path is excluded by the connector's operations.exclude pattern "path:/internal/*"`},
		{"GET", "/secret", connectors.Route{}, `GET /secret reaches the operation getSecret (GET /secret), which the connector's operations.exclude pattern "getSecret" removed`},
		{"HEAD", "/SECRET/", connectors.Route{}, `which the connector's operations.exclude pattern "getSecret" removed`},
		{"GET", "/secret;jsessionid=1", connectors.Route{}, `GET /secret;jsessionid=1 reaches the operation getSecret`},
		{"GET", "/admin;x/stats", connectors.Route{}, `operations.exclude pattern "path:/admin/*"`},
		{"GET", "/x/..%2fsecret", connectors.Route{}, `path: "/x/..%2fsecret" has a ".." segment, which is not allowed`},
		{"FETCH", "/pets/1", connectors.Route{}, `method: "FETCH" is not one of`},
	} {
		args, _ := json.Marshal(map[string]string{"method": tt.method, "path": tt.path})
		got, ok, err := c.Route("request", args)
		switch {
		case !ok:
			t.Errorf("%s %s: not generic", tt.method, tt.path)
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: error %v, want %q", tt.method, tt.path, err, tt.err)
			}
			res, cerr := c.Call(context.Background(), "request", args)
			if cerr != nil || !res.IsError || !strings.Contains(res.Message, "request: ") || !strings.Contains(res.Message, tt.err) {
				t.Errorf("%s %s: Call gave %+v %v", tt.method, tt.path, res, cerr)
			}
		case err != nil:
			t.Errorf("%s %s: %v", tt.method, tt.path, err)
		default:
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.path, diff)
			}
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("refused calls sent %d requests", n)
	}
	if _, ok, _ := c.Route("getPet", json.RawMessage(`{"petId":"1"}`)); ok {
		t.Error("an operation's method is generic")
	}
	// An absolute URL names the base URL's origin in another way: the
	// host in capitals, the default port written out.
	named, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, routesDocument), BaseURL: "http://localhost/v1", Exclude: []string{"getSecret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { named.Close() })
	for _, p := range []string{"http://LOCALHOST/v1/secret", "http://localhost:80/v1/secret", "HTTP://LocalHost:80/v1/Secret/"} {
		args, _ := json.Marshal(map[string]string{"method": "GET", "path": p})
		if _, _, err := named.Route("request", args); err == nil || !strings.Contains(err.Error(), `operations.exclude pattern "getSecret" removed`) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if got, _, err := named.Route("request", json.RawMessage(`{"method":"GET","path":"http://LOCALHOST:80/v1/pets/1"}`)); err != nil ||
		!cmp.Equal(got, connectors.Route{Tools: []string{"getPet"}, Paths: []string{"/pets/1"}}, cmpopts.EquateEmpty()) {
		t.Errorf("another spelling of the origin: %+v %v", got, err)
	}

	// An operation operations.include leaves out is reachable: it is not
	// one of the connector's methods, so the method's rule applies.
	inc, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, routesDocument), BaseURL: api.srv.URL, Include: []string{"getPet"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inc.Close() })
	if got, _, err := inc.Route("request", json.RawMessage(`{"method":"DELETE","path":"/pets/1"}`)); err != nil ||
		!cmp.Equal(got, connectors.Route{Paths: []string{"/pets/1"}, RequiresApproval: true}, cmpopts.EquateEmpty()) {
		t.Errorf("not included: %+v %v", got, err)
	}
}
