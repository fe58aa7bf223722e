package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

var signInLinkRe = regexp.MustCompile(`<a class="signin-link" href="([^"]+)"`)

// A run awaiting a sign-in shows why and a "Sign in" button instead of
// Approve; the button leads to a page with the link to the sign-in page;
// once the person has signed in there, the run goes on by itself.
func TestSignInFromTheConsole(t *testing.T) {
	g := fixture.NewGated(t, "remote")
	e := newEnvWith(t, console.Options{Token: token}, catalog.Source{Connector: g})
	o, err := e.rt.Execute(e.ctx, `async () => (await remote.post({ x: 1 })).n`, nil)
	if err != nil || o.Status != codemode.StatusPaused {
		t.Fatalf("run: %+v, %v; want paused", o, err)
	}
	id := o.ExecutionID
	b := e.browser()
	b.login(token)
	p := b.get("/")
	if !strings.Contains(p.body, "Awaits a sign-in to") || !strings.Contains(p.body, ">Sign in to remote</button>") {
		t.Fatalf("the pending page does not offer the sign-in:\n%s", p.body)
	}
	if csrf, digest := form(t, p, id); digest != "" || csrf == "" {
		t.Fatalf("the run awaiting a sign-in has an Approve form (digest %q)", digest)
	}
	csrf, _ := form(t, p, id)

	if other := b.do("POST", "/runs/"+id+"/signin", url.Values{"csrf": {csrf}, "connector": {"notes"}}, nil); other.status != http.StatusConflict {
		t.Fatalf("sign-in to a connector the run does not await: %d, want 409", other.status)
	}
	if g.Begun() != 0 {
		t.Fatal("a sign-in was begun for a connector the run does not await")
	}
	page := b.do("POST", "/runs/"+id+"/signin", url.Values{"csrf": {csrf}, "connector": {"remote"}}, nil)
	m := signInLinkRe.FindStringSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		t.Fatalf("sign-in page: %d\n%s", page.status, page.body)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	if !strings.Contains(link, fixture.GatedState) {
		t.Fatalf("link %q is not the connector's sign-in page", link)
	}
	// The sign-in under way: the console's.
	bg, err := e.rt.StartSignIn(e.ctx, "remote", time.Minute)
	if err != nil || g.Begun() != 1 {
		t.Fatalf("StartSignIn: %v (%d begun); want the console's sign-in", err, g.Begun())
	}
	resp, err := http.Get(link) // the person signs in
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := bg.Err(); err != nil {
		t.Fatal(err)
	}
	if st := e.status(id); st != codemode.StatusCompleted || g.Calls("post") != 1 {
		t.Fatalf("after the sign-in the run is %s with %d calls; want completed with one", st, g.Calls("post"))
	}
}
