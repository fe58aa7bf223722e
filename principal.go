package codemode

import (
	"context"
	"encoding/json"
	"slices"
)

// Scopes of the OAuth access tokens a server with an issuer
// (server.auth.issuer) accepts. Each MCP tool and task request needs one of
// them (the table is server.ToolScopes); a token may carry several.
const (
	// ScopeRun starts programs and reads runs and snippets.
	ScopeRun = "codemode:run"
	// ScopeApprove decides pending actions (approve, reject).
	ScopeApprove = "codemode:approve"
	// ScopeAdmin rolls runs back and opens the approval console.
	ScopeAdmin = "codemode:admin"
)

// Scopes lists the scopes in the order the protected resource metadata
// names them.
var Scopes = []string{ScopeRun, ScopeApprove, ScopeAdmin}

// A Principal is the person (or client acting for one) whose access token
// a request came with, as the token says: the HTTP guard of a server with
// an issuer validates the token and puts its Principal in the request's
// context (WithPrincipal), so that everything downstream of the guard (the
// tools, the engine, the console) can tell who asks. A server without an
// issuer (stdio, or a static bearer token) has no principals: whoever
// reaches it is the one user. Its fields are fixed once made.
type Principal struct {
	// Issuer is the authorization server that issued the token.
	Issuer string
	// Subject is the token's sub: who the person is at the issuer.
	Subject string
	// Name and Email are the token's name and email claims, when it has
	// them ("" otherwise).
	Name, Email string
	// ClientID is the OAuth client the token was issued to (client_id or
	// azp), when the token says.
	ClientID string
	// Scopes are the scopes granted (scope, or scp).
	Scopes []string
	// Groups and Roles are the token's groups and roles claims (a string
	// or an array of strings), when it has them.
	Groups, Roles []string
	// Token is the access token itself, for a connector that trades it
	// for a downstream's (RFC 8693 token exchange, credentials:
	// {per_user: token_exchange}) while its person's request is at hand.
	// It is never kept: what is kept is the downstream's token, sealed,
	// as any grant. Its String is "[redacted]", so printing a Principal
	// does not show it.
	Token Secret
}

// A Secret is a credential held in memory: printed (%v, %s, %+v, %#v) or
// marshalled to JSON it is "[redacted]"; string(s) is the value.
type Secret string

const redactedSecret = "[redacted]"

func (Secret) String() string   { return redactedSecret }
func (Secret) GoString() string { return redactedSecret }

// MarshalJSON writes "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redactedSecret) }

// HasScope reports whether the token granted scope.
func (p *Principal) HasScope(scope string) bool {
	return p != nil && slices.Contains(p.Scopes, scope)
}

// Display is how the principal is named to people: its name, else its
// email, else its subject.
func (p *Principal) Display() string {
	switch {
	case p == nil:
		return ""
	case p.Name != "":
		return p.Name
	case p.Email != "":
		return p.Email
	}
	return p.Subject
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, or nil when the
// request came without one (no issuer configured).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
