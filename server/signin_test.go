package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

func newSignInServer(t *testing.T, g *fixture.Gated) *server.Server {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "codemode.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := pass.NewInProcess(pass.InProcessOptions{})
	r, err := rt.New(ctx, rt.Options{Store: st, Executor: ex, Sources: []catalog.Source{{Connector: g}},
		Limits: sandbox.Limits{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		ex.Close()
		st.Close()
	})
	return server.New(server.Options{Version: "test", Runtime: r, Elicitation: true})
}

// connectURL starts an in-process client that declares URL-mode
// elicitation (and form mode) and answers with h.
func connectURL(t *testing.T, s *server.Server, h elicitFunc) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(s.MCP(), client.WithElicitationHandler(h))
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c, mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}})
}

const signInProgram = `async () => await remote.post({})`

// A run paused for a sign-in, with a client that can open links: the
// person is asked (URL-mode elicitation) to open the sign-in page, and once
// they have signed in the same tools/call resumes the run, which makes the
// call once. The model's outcome holds no part of the link.
func TestSignInThroughURLElicitation(t *testing.T) {
	g := fixture.NewGated(t, "remote")
	var asked []mcp.ElicitationParams
	c := connectURL(t, newSignInServer(t, g), func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		asked = append(asked, r.Params)
		if r.Params.Mode == mcp.ElicitationModeURL {
			resp, err := http.Get(r.Params.URL) // the person opens the link
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
	})
	out, isErr := call(t, c, "codemode", map[string]any{"code": signInProgram})
	if isErr || out["status"] != "completed" || fmt.Sprint(out["result"]) != "map[n:1 tool:post]" {
		t.Fatalf("outcome %v (isError %v), want completed with 1", out, isErr)
	}
	if len(asked) != 1 || asked[0].Mode != mcp.ElicitationModeURL || !strings.Contains(asked[0].Message, "Sign in to remote") || asked[0].ElicitationID == "" {
		t.Fatalf("elicitations %+v, want one URL-mode request naming remote", asked)
	}
	if n := g.Calls("post"); n != 1 {
		t.Fatalf("remote.post made %d times", n)
	}
	if b, _ := json.Marshal(out); strings.Contains(string(b), fixture.GatedState) {
		t.Fatalf("the outcome holds the link: %s", b)
	}
}

// A client that cannot open links, or a person who declines, leaves the
// run paused awaiting the sign-in, and says so in the outcome.
func TestSignInPauseWithoutURLElicitation(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  bool
	}{{"form-only client", false}, {"declined", true}} {
		t.Run(tc.name, func(t *testing.T) {
			g := fixture.NewGated(t, "remote")
			h := func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
			}
			s := newSignInServer(t, g)
			var c *client.Client
			if tc.url {
				c = connectURL(t, s, h)
			} else {
				c = connect(t, s, h)
			}
			out, _ := call(t, c, "codemode", map[string]any{"code": signInProgram})
			pending, _ := out["pending"].([]any)
			if out["status"] != "paused" || len(pending) != 1 {
				t.Fatalf("outcome %v, want paused with one pending action", out)
			}
			p := pending[0].(map[string]any)
			if p["awaits"] != "sign_in" || p["connector"] != "remote" || !strings.Contains(fmt.Sprint(p["reason"]), "not signed in yet") {
				t.Fatalf("pending action %v, want remote awaiting a sign-in with its reason", p)
			}
			if g.Calls("post") != 0 {
				t.Fatal("the call was made without a sign-in")
			}
		})
	}
}
