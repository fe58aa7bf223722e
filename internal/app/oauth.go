package app

import (
	"crypto"
	"fmt"
	"log/slog"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/appdirs"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// DefaultSealer seals stored tokens with the key of CODEMODE_SECRET_KEY,
// else of the key file in the data directory (created on first use).
func DefaultSealer() *oauth.Sealer {
	return oauth.LazySealer(func() ([]byte, error) {
		dir, _ := appdirs.Data() // "" when there is none
		key, _, err := oauth.LoadKey(dir)
		return key, err
	})
}

// OAuthFor is the OAuth client of a url connector, keeping its grants in
// tokens sealed by sealer; nil when the connector does not sign in: it
// sends an Authorization header of its own, or its server is plain HTTP
// beyond this machine (tokens are sent only over HTTPS) and it has no
// oauth: map (with one, that is an error). account is the person the
// client signs in for (oauth.Config.Account: a connector with
// credentials: per_user), "" for the connector's one grant; a per-user
// client that cannot be made is an error. signedIn, if not nil, hears how
// each sign-in ended (oauth.Config.OnSignInEnded).
func OAuthFor(cc config.Connector, account string, tokens oauth.Store, sealer *oauth.Sealer, sc *scrub.Scrubber, log *slog.Logger, signedIn func(error)) (*oauth.Session, error) {
	if !cc.Remote() || cc.OwnAuthorization() {
		return nil, nil
	}
	o := cc.OAuth
	if o == nil {
		o = &config.OAuth{}
	}
	var key crypto.Signer
	if o.PrivateKey != "" {
		b, err := config.ReadKeyFile(o.PrivateKey)
		if err == nil {
			key, err = oauth.ParsePrivateKey(b)
		}
		if err != nil {
			return nil, fmt.Errorf("connector %s: oauth.private_key %s: %w", cc.Name, o.PrivateKey, err)
		}
	}
	ocfg := oauth.Config{
		Connector:         cc.Name,
		Server:            cc.URL,
		Account:           account,
		Grant:             o.Grant,
		ClientID:          o.ClientID,
		ClientSecret:      o.ClientSecret,
		ClientMetadataURL: o.ClientMetadataURL,
		PrivateKey:        key,
		Scopes:            o.Scopes,
		Store:             tokens,
		Sealer:            sealer,
		Scrubber:          sc,
		Logger:            log,
		OnSignInEnded:     signedIn,
	}
	if x := cc.TokenExchange; x != nil {
		// Nobody signs in: each person's own token is traded (RFC 8693).
		ocfg.Grant, ocfg.TokenEndpoint, ocfg.Audience = oauth.GrantTokenExchange, x.TokenEndpoint, x.Audience
		ocfg.ClientID, ocfg.ClientSecret, ocfg.Scopes = x.ClientID, x.ClientSecret, x.Scopes
	}
	s, err := oauth.New(ocfg)
	if err != nil && cc.OAuth == nil && !cc.PerUser() {
		log.Debug("the connector will not sign in", "connector", cc.Name, "why", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("connector %s: oauth: %w", cc.Name, err)
	}
	return s, nil
}

// RemoteConfig is the mcp.Config of cc alone (login and check --url open
// it with mcp.Open), signing in through an OAuth session on tokens (see
// OAuthFor), which the connector owns.
func RemoteConfig(cc config.Connector, tokens oauth.Store, sealer *oauth.Sealer, sc *scrub.Scrubber, log *slog.Logger) (mcp.Config, error) {
	auth, err := OAuthFor(cc, "", tokens, sealer, sc, log, nil)
	if err != nil {
		return mcp.Config{}, err
	}
	return mcpConfig(cc, auth, sc, log, nil), nil
}

// mcpConfig is the mcp.Config of an MCP connector (stdio, url or SSE).
func mcpConfig(cc config.Connector, auth *oauth.Session, sc *scrub.Scrubber, log *slog.Logger, onToolsChanged func()) mcp.Config {
	return mcp.Config{
		Name:            cc.Name,
		Command:         cc.Command,
		Args:            cc.Args,
		Env:             cc.Env,
		Inherit:         cc.Inherit.Names,
		InheritAll:      cc.Inherit.All,
		Dir:             cc.Cwd,
		URL:             cc.URL,
		SSE:             cc.Kind == config.KindSSE,
		Headers:         cc.Headers,
		OAuth:           auth,
		Include:         cc.Tools.Include,
		Exclude:         cc.Tools.Exclude,
		ForwardUnknown:  cc.ForwardUnknown,
		CallTimeout:     cc.Timeout,
		RestartDelay:    cc.RestartDelay,
		MaxRestartDelay: cc.MaxRestartDelay,
		Logger:          log,
		Scrubber:        sc,
		OnToolsChanged:  onToolsChanged,
	}
}
