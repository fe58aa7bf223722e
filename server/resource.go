package server

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/resource"
)

// ToolScopes is the scope a token must carry to call each MCP tool when
// the server has an issuer (server.auth): any one of those listed. A
// tool missing here needs codemode:run (TestEveryToolHasAScope keeps the
// table whole). Rolling back undoes what was approved, so it is an
// administrator's; listing pending actions is for whoever runs programs
// or decides them.
var ToolScopes = map[string][]string{
	"codemode":              {codemode.ScopeRun},
	"codemode_executions":   {codemode.ScopeRun},
	"codemode_snippets":     {codemode.ScopeRun},
	"codemode_save_snippet": {codemode.ScopeRun},
	"codemode_pending":      {codemode.ScopeRun, codemode.ScopeApprove},
	"codemode_approve":      {codemode.ScopeApprove},
	"codemode_reject":       {codemode.ScopeApprove},
	"codemode_rollback":     {codemode.ScopeAdmin},
}

// methodScopes is the scope of the MCP methods besides tools/call that
// touch runs: the task requests (a task is a codemode run; tasks/update
// answers its approval questions). Other methods need a valid token and
// no scope.
var methodScopes = map[mcp.MCPMethod][]string{
	mcp.MethodTasksGet:    {codemode.ScopeRun},
	mcp.MethodTasksList:   {codemode.ScopeRun},
	mcp.MethodTasksResult: {codemode.ScopeRun},
	mcp.MethodTasksCancel: {codemode.ScopeRun},
	methodTasksUpdate:     {codemode.ScopeApprove},
}

// consoleScope is what a bearer token needs to reach the approval console
// under an issuer without server.auth.console: the console then cannot
// sign people in, so browsers are refused and only a client that sends
// such a token gets in.
const consoleScope = codemode.ScopeAdmin

// issuerConsole is a console that signs people in through the issuer
// (package console's Console, given server.auth.console).
type issuerConsole interface {
	SignInThrough(so console.SignOn, issuer string)
}

// signInToConsole, with server.auth.console, makes the console sign
// people in through the issuer with the resource server's Validator (one
// verifier for the MCP endpoint's tokens and the console's), its
// redirect URI /auth/callback at the resource's origin unless cc names
// one (whose host is then served, as the resource's is). The console's
// requests then pass the guard without a bearer token.
func (g *guard) signInToConsole(cc *config.ConsoleSignOn) error {
	ic, ok := g.opts.Console.(issuerConsole)
	if cc == nil || !ok {
		return nil
	}
	redirect := cc.RedirectURI
	if redirect == "" {
		redirect = g.rs.origin + config.ConsoleCallbackPath
	} else {
		g.allowHostOf(redirect)
	}
	so, err := g.rs.v.SignOn(resource.SignOnConfig{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret, RedirectURI: redirect,
		Scopes: orDefault(cc.Scopes, config.DefaultConsoleScopes), Resource: g.rs.resource})
	if err != nil {
		return fmt.Errorf("server.auth.console: %w", err)
	}
	ic.SignInThrough(so, g.rs.v.Issuer())
	g.consoleSignsIn = true
	g.opts.Logger.Info("the approval console signs people in through the issuer", "issuer", g.rs.v.Issuer(), "client_id", cc.ClientID, "redirect_uri", redirect)
	return nil
}

// metricsScope is what a bearer token needs to read PathMetrics under an
// issuer: the metrics speak of every principal's runs, as the console
// does.
const metricsScope = codemode.ScopeAdmin

// resourceServer is the HTTP face of server.auth: it validates the
// bearer token of every request to the MCP endpoints (and the console),
// puts its Principal in the request's context, checks the scope of
// tools/call and the task requests, and serves the protected resource
// metadata (RFC 9728) that tells clients where to sign in.
type resourceServer struct {
	// fixed at creation
	v            *resource.Validator
	resource     string // this server's resource identifier
	origin       string // the resource's scheme://host
	metadataPath string // where clients find its metadata at origin (also at the well-known path)
	metadata     http.Handler
}

// newResourceServer makes the resource server for auth, whose MCP
// endpoint listens at listenURL (the resource unless auth.Resource says
// otherwise).
func newResourceServer(auth *config.ServerAuth, listenURL string, opts *Options) (*resourceServer, error) {
	res := cmp.Or(auth.Resource, listenURL)
	u, err := url.Parse(res)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("server.auth: the resource %q is not an absolute URL", res)
	}
	v, err := resource.New(resource.Config{
		Issuer:                auth.Issuer,
		Audience:              cmp.Or(auth.Audience, res),
		ClientID:              auth.Introspection.ClientID,
		ClientSecret:          auth.Introspection.ClientSecret,
		IntrospectionEndpoint: auth.Introspection.Endpoint,
		Logger:                opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("server.auth: %w", err)
	}
	return &resourceServer{
		v:            v,
		resource:     res,
		origin:       u.Scheme + "://" + u.Host,
		metadataPath: mcpserver.ProtectedResourceMetadataPath(res),
		metadata: mcpserver.NewProtectedResourceMetadataHandler(mcpserver.ProtectedResourceMetadataConfig{
			Resource:               res,
			AuthorizationServers:   []string{auth.Issuer},
			ScopesSupported:        orDefault(auth.ScopesSupported, codemode.Scopes),
			BearerMethodsSupported: []string{"header"},
			ResourceName:           opts.Name,
		}),
	}, nil
}

// orDefault is list, or def when list is empty.
func orDefault(list, def []string) []string {
	if len(list) == 0 {
		return def
	}
	return list
}

// CheckAuthAddr reports whether a server with auth can listen on addr:
// without server.auth.resource the resource is the listen address, which
// must then be one a client can reach (not 0.0.0.0 or ::). serve checks
// it as soon as it listens, before it starts anything; ServeHTTP takes
// its listener as checked.
func CheckAuthAddr(auth *config.ServerAuth, addr net.Addr) error {
	if a, ok := addr.(*net.TCPAddr); ok && auth != nil && auth.Resource == "" && a.IP.IsUnspecified() {
		return fmt.Errorf("server.auth: the server listens on %s, which is no address a client can reach: set server.auth.resource to the MCP endpoint's public URL", addr)
	}
	return nil
}

// servesMetadata reports whether path is where the metadata is served.
func (rs *resourceServer) servesMetadata(path string) bool {
	return path == rs.metadataPath || path == mcpserver.WellKnownProtectedResourcePath
}

// principal validates an access token of the issuer.
func (rs *resourceServer) principal(ctx context.Context, header []string) (*codemode.Principal, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(header[0]), " ")
	if len(header) > 1 || !strings.EqualFold(scheme, "Bearer") {
		return nil, fmt.Errorf("%w: the Authorization header is not one Bearer token", resource.ErrInvalid)
	}
	return rs.v.Validate(ctx, strings.TrimSpace(token))
}

func (*resourceServer) words() (wanted, bad, aBad string) {
	return "this server wants an access token from its authorization server (see resource_metadata)", "invalid access tokens", "an invalid access token"
}

// authorizeBody checks that the request's principal has the scope of
// the message of a POST body: 403 insufficient_scope naming the scope
// missing otherwise. Other methods (initialize, tools/list, ping,
// notifications, responses), a body that does not parse and a batch (the
// transport answers either with a parse error) need none here.
func (g *guard) authorizeBody(w http.ResponseWriter, r *http.Request, body *rpcBody) bool {
	p := codemode.PrincipalFrom(r.Context())
	if m := body.message(); m != nil {
		scopes := methodScopes[m.Method]
		if m.Method == mcp.MethodToolsCall {
			scopes = orDefault(ToolScopes[m.head.Name], []string{codemode.ScopeRun})
		}
		if scopes != nil && !slices.ContainsFunc(scopes, p.HasScope) {
			g.rs.challenge(w, http.StatusForbidden, "insufficient_scope",
				"the access token lacks the scope "+strings.Join(scopes, " or ")+" this request needs", strings.Join(scopes, " "))
			return false
		}
	}
	return true
}

// challenge refuses a request with the server's resource metadata: see
// resource.Challenge.
func (rs *resourceServer) challenge(w http.ResponseWriter, status int, code, description, scope string) {
	resource.Challenge(w, status, code, description, scope, rs.origin+rs.metadataPath)
}
