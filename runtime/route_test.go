package runtime_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors/openapi"
)

// routedDocument is the API of TestRequestFollowsWhatItReaches.
const routedDocument = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
  "/pets/{petId}":{"get":{"operationId":"getPet","parameters":[{"name":"petId","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},
  "/admin/stats":{"get":{"operationId":"adminStats","responses":{"200":{"description":"ok"}}}},
  "/search":{"post":{"operationId":"search","responses":{"200":{"description":"ok"}}}},
  "/secret":{"get":{"operationId":"getSecret","responses":{"200":{"description":"ok"}}}},
  "/open":{"get":{"operationId":"openOp","responses":{"200":{"description":"ok"}}}}
}}`

// TestRequestFollowsWhatItReaches checks that an OpenAPI connector's
// request() cannot walk around the rules of the operations it reaches: a
// GET of an operation the approve globs name pauses (no_approve on request
// does not lift it), whatever the case of its path; approve's path:
// globs gate an operation by its template and a request by its path; a
// POST that reaches an operation no_approve names runs at once; a path
// that operations.exclude removed is refused before anything is logged
// or sent; a path no operation has follows no_approve on request.
func TestRequestFollowsWhatItReaches(t *testing.T) {
	var mu sync.Mutex
	var got []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(api.Close)
	doc := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(doc, []byte(routedDocument), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := openapi.New(context.Background(), openapi.Config{Name: "api", Document: doc, BaseURL: api.URL, Exclude: []string{"getSecret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := newEnv(t, setup{extra: []catalog.Source{{Connector: c, Approve: []string{"getPet", "path:/admin/*"}, NoApprove: []string{"search", "request"}}}})

	for _, tt := range []struct {
		code   string
		status codemode.ExecStatus
		reason string // why it awaits approval, when paused
	}{
		{`await api.request({method: "GET", path: "/pets/1"})`, codemode.StatusPaused,
			"this call of request reaches getPet (GET /pets/{petId}), and the configuration's approve list for api matches getPet"},
		{`await api.request({method: "get", path: "/PETS/1/"})`, codemode.StatusPaused, ""},
		{`await api.request({method: "HEAD", path: "/pets/1"})`, codemode.StatusPaused, ""},
		{`await api.request({method: "GET", path: "/admin/users"})`, codemode.StatusPaused,
			"the configuration's approve list for api matches the path /admin/users"},
		{`await api.adminStats({})`, codemode.StatusPaused, "the configuration's approve list for api matches adminStats"},
		{`await api.request({method: "POST", path: "/search"})`, codemode.StatusCompleted, ""},
		{`await api.request({method: "GET", path: "/open"})`, codemode.StatusCompleted, ""},
		{`await api.request({method: "DELETE", path: "/nowhere"})`, codemode.StatusCompleted, ""},
	} {
		o := e.run(tt.code, nil)
		if o.Status != tt.status {
			t.Errorf("%s: %s (%s), want %s", tt.code, o.Status, o.Error, tt.status)
			continue
		}
		if tt.reason != "" {
			if r := e.rt.Method(o.Pending[0].Connector, o.Pending[0].Method, o.Pending[0].Args).ApprovalReason; r != tt.reason {
				t.Errorf("%s: pending because %q, want %q", tt.code, r, tt.reason)
			}
		}
	}

	o := e.run(`await api.request({method: "GET", path: "/secret"})`, nil)
	mustStatus(t, o, codemode.StatusError)
	if want := `api.request: GET /secret reaches the operation getSecret (GET /secret), which the connector's operations.exclude pattern "getSecret" removed`; !strings.Contains(o.Error, want) {
		t.Errorf("excluded: %q, want %q", o.Error, want)
	}
	if l := e.log(o.ExecutionID); len(l) != 0 {
		t.Errorf("a refused call was logged: %v", l)
	}
	// Refused first: with request itself in approve, a call of an
	// excluded path is still refused, not put to anyone.
	gated := newEnv(t, setup{noKV: true, extra: []catalog.Source{{Connector: c, Approve: []string{"request"}}}})
	o = gated.run(`await api.request({method: "GET", path: "/secret"})`, nil)
	mustStatus(t, o, codemode.StatusError)
	if !strings.Contains(o.Error, `operations.exclude pattern "getSecret" removed`) {
		t.Errorf("excluded, request in approve: %q", o.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "POST /search,GET /open,DELETE /nowhere"; strings.Join(got, ",") != want {
		t.Errorf("the API got %v, want %s", got, want)
	}
}
