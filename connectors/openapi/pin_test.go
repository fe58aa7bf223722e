package openapi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDoc writes an OpenAPI document for a test and returns its path.
func writeDoc(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBaseURLPinsServers checks that with base_url set no server the
// document names takes a request, or the credentials, to another origin:
// absolute servers and network-path references ("//host/path") at the
// operation and the path level are replaced by base_url; a server that is
// a path on the base URL's origin is kept.
func TestBaseURLPinsServers(t *testing.T) {
	api := newRecorder(t, nil)
	other := newRecorder(t, nil)
	otherHost := strings.TrimPrefix(other.srv.URL, "http://")
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},
	"servers":[{"url":"` + other.srv.URL + `/doc"}],
	"paths":{
	  "/op-netpath":{"get":{"operationId":"opNetPath","servers":[{"url":"//` + otherHost + `/x"}],"responses":{"200":{"description":"ok"}}}},
	  "/item-netpath":{"servers":[{"url":"//` + otherHost + `"}],"get":{"operationId":"itemNetPath","responses":{"200":{"description":"ok"}}}},
	  "/op-absolute":{"get":{"operationId":"opAbsolute","servers":[{"url":"` + other.srv.URL + `/y"}],"responses":{"200":{"description":"ok"}}}},
	  "/op-relative":{"get":{"operationId":"opRelative","servers":[{"url":"/v2"}],"responses":{"200":{"description":"ok"}}}}
	}}`
	c, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, doc), BaseURL: api.srv.URL + "/v1", Auth: &Auth{Bearer: "pinned-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, tt := range []struct{ op, want string }{
		{"opNetPath", "/v1/op-netpath"},
		{"itemNetPath", "/v1/item-netpath"},
		{"opAbsolute", "/v1/op-absolute"},
		{"opRelative", "/v2/op-relative"},
	} {
		res, err := c.Call(context.Background(), tt.op, json.RawMessage(`{}`))
		if err != nil || res.IsError {
			t.Errorf("%s: %v %s", tt.op, err, res.Message)
			continue
		}
		if reqs := other.requests(); len(reqs) > 0 {
			t.Errorf("%s: the request left base_url's origin: %s %s (Authorization %q)", tt.op, reqs[0].Method, reqs[0].URI, reqs[0].Header.Get("Authorization"))
			return
		}
		if got := api.last(t); got.URI != tt.want || got.Header.Get("Authorization") != "Bearer pinned-secret" {
			t.Errorf("%s: the API got %s (Authorization %q), want %s", tt.op, got.URI, got.Header.Get("Authorization"), tt.want)
		}
	}
}
