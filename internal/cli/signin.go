package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// maxSignIns bounds the sign-ins of one login or check --url: the first,
// and the step-ups a server asking for more scopes may need.
const maxSignIns = 3

// remoteConnector finds the url connector name in cfg.
func remoteConnector(cfg *config.Config, cmd, name string) (config.Connector, error) {
	var remotes []string
	for _, cc := range cfg.Connectors {
		if cc.Remote() {
			remotes = append(remotes, cc.Name)
		}
		if cc.Name != name {
			continue
		}
		if !cc.Remote() {
			return cc, usagef("%s: connector %s is not a url connector: only a remote MCP server signs in", cmd, name)
		}
		if cc.OwnAuthorization() {
			return cc, usagef("%s: connector %s sends an Authorization header of its own (headers:): it does not sign in", cmd, name)
		}
		return cc, nil
	}
	return config.Connector{}, usagef("%s: no connector %q in %s; url connectors: %s", cmd, name,
		cmp.Or(cfg.Path, "the built-in default"), cmp.Or(strings.Join(remotes, ", "), "none"))
}

// signInOnce runs one sign-in of s: it prints the URL on w, opens the
// browser unless told not to ($BROWSER, else the system's opener), and
// waits for the browser to come back.
func signInOnce(ctx context.Context, s connectors.SignIner, name string, w io.Writer, browser bool, log *slog.Logger) error {
	a, err := s.BeginSignIn(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(w, "Sign in to %s: open\n\n  %s\n\n", name, a.URL())
	if browser {
		b, err := oauth.OpenBrowser(a.URL())
		if err != nil {
			fmt.Fprintf(w, "(%v)\n", err)
		} else {
			defer func() {
				if err := b.Close(); err != nil {
					log.Debug("the browser opener", "err", err)
				}
			}()
		}
	}
	fmt.Fprintln(w, "Waiting for the browser to come back…")
	return a.Wait(ctx)
}

// target is the url connector a login or logout is about, with the store
// of its sign-ins.
type target struct {
	cc  config.Connector
	st  app.Store
	loc string          // the store's location
	sc  *scrub.Scrubber // the configuration's secrets
	log *slog.Logger    // scrubbed
}

// openTarget parses the command line of login or logout (fs has its
// flags), finds the connector it names and opens the store; close the
// store when done.
func openTarget(ctx context.Context, cmd string, fs *flag.FlagSet, c *common, args []string, env Env, log *slog.Logger) (*target, error) {
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usagef("%s: name one connector (a url connector of the configuration), got %q", cmd, pos)
	}
	cfg, err := loadConfig(*c)
	if err != nil {
		return nil, err
	}
	cc, err := remoteConnector(cfg, cmd, pos[0])
	if err != nil {
		return nil, err
	}
	// The sign-ins are kept in --db, else store.path, else the default.
	loc, err := app.StorePath(cfg, c.db)
	if err != nil {
		return nil, err
	}
	st, err := app.OpenStore(ctx, cfg, loc, log)
	if err != nil {
		return nil, err
	}
	sc := scrub.New(append(cfg.Secrets(), config.DatabaseURLSecrets(loc)...)...)
	return &target{cc: cc, st: st, loc: loc, sc: sc, log: slog.New(scrub.NewHandler(log.Handler(), sc))}, nil
}

func cmdLogin(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("login", env, &c)
	noBrowser := fs.Bool("no-browser", false, "print the URL to open, without opening a browser")
	noResume := fs.Bool("no-resume", false, "do not resume the runs that wait for this sign-in")
	tg, err := openTarget(ctx, "login", fs, &c, args, env, log)
	if err != nil {
		return err
	}
	defer tg.st.Close()
	cc, sc := tg.cc, tg.sc
	if cc.PerUser() {
		// The grant would be stored as one person's whoever signed in
		// at the authorization server: each person signs in from their
		// own run instead (its sign-in link), as themselves.
		return usagef("login: connector %s has credentials: per_user: each person signs in for themselves, from the run that needs it (its sign-in link, or the approval console); `logout %s --user SUBJECT` forgets one person's sign-in", cc.Name, cc.Name)
	}
	mc, err := app.RemoteConfig(cc, tg.st, app.DefaultSealer(), sc, tg.log)
	if err != nil {
		return usageError{err}
	}
	conn, err := mcp.Open(ctx, mc)
	if err != nil {
		return usageError{err}
	}
	defer conn.Close()
	if cc.OAuth != nil && cc.OAuth.Grant == oauth.GrantClientCredentials {
		tools, err := conn.Tools(ctx)
		if err != nil {
			return sc.Error(fmt.Errorf("login %s: %w", cc.Name, err))
		}
		fmt.Fprintf(env.Stdout, "%s uses the client_credentials grant: no sign-in; connected, %d tools.\n", cc.Name, len(tools))
		return nil
	}
	signIns := 0
	for {
		signIns++
		if err := signInOnce(ctx, conn, cc.Name, env.Stdout, !*noBrowser, tg.log); err != nil {
			return sc.Error(fmt.Errorf("login %s: %w", cc.Name, err))
		}
		tools, err := conn.Tools(ctx)
		if _, ok := connectors.AsSignInRequired(err); ok && signIns < maxSignIns {
			continue // the server wants more (scopes): sign in again
		}
		if err != nil {
			return sc.Error(fmt.Errorf("login %s: signed in, but: %w", cc.Name, err))
		}
		fmt.Fprintf(env.Stdout, "Signed in to %s (%d tools). Its tokens are kept, encrypted, in %s.\n", cc.Name, len(tools), app.StoreDisplay(tg.loc))
		if *noResume {
			return nil
		}
		_ = conn.Close()
		return resumeSignedIn(ctx, c, cc.Name, env, log)
	}
}

// resumeSignedIn resumes, in this process, every paused run that waits
// for the sign-in to connector name just made, as the runtime's own
// sign-in does (Runtime.Resume with the digest listed: a run that moved on
// meanwhile is refused, not approved unseen): each runs again by replay
// with the configuration's connectors. A run that then pauses again (for
// an approval, say) is reported as such.
func resumeSignedIn(ctx context.Context, c common, name string, env Env, log *slog.Logger) error {
	eng, stop, err := openApp(ctx, c, log, true)
	if err != nil {
		return err
	}
	defer stop()
	runs, err := eng.AwaitingSignIn(ctx, name)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return nil
	}
	if len(runs) == 1 {
		fmt.Fprintln(env.Stdout, "Resuming the run that waited for it:")
	} else {
		fmt.Fprintf(env.Stdout, "Resuming the %d runs that waited for it:\n", len(runs))
	}
	failed := false
	for _, a := range runs {
		o, err := eng.Resume(ctx, a.ID, a.Review)
		switch {
		case errors.Is(err, codemode.ErrNeedsSignIn): // another sign-in it awaits resumes it
			fmt.Fprintf(env.Stdout, "  %s: waits for another sign-in too: %s\n", a.ID, visible.Escape(err.Error()))
		case err != nil:
			failed = true
			fmt.Fprintf(env.Stdout, "  %s: not resumed: %s\n", a.ID, visible.Escape(err.Error()))
		case o.Status == codemode.StatusPaused:
			fmt.Fprintf(env.Stdout, "  %s: paused again (codemode-mcp approvals list)\n", a.ID)
		default:
			fmt.Fprintf(env.Stdout, "  %s: %s\n", a.ID, o.Status)
		}
	}
	if failed {
		return exitError{ExitFailure}
	}
	return nil
}

func cmdLogout(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("logout", env, &c)
	user := fs.String("user", "", "the person (their subject at server.auth.issuer) whose sign-in to forget, for a connector with credentials: per_user")
	tg, err := openTarget(ctx, "logout", fs, &c, args, env, log)
	if err != nil {
		return err
	}
	defer tg.st.Close()
	cc, sc := tg.cc, tg.sc
	switch {
	case cc.PerUser() && *user == "":
		return usagef("logout: connector %s has credentials: per_user: name whose sign-in to forget with --user SUBJECT", cc.Name)
	case !cc.PerUser() && *user != "":
		return usagef("logout: --user applies to a connector with credentials: per_user; %s has one sign-in for everyone", cc.Name)
	}
	s, err := app.OAuthFor(cc, *user, tg.st, app.DefaultSealer(), sc, tg.log, nil)
	if err != nil {
		return usageError{err}
	}
	if s == nil {
		return usagef("logout: connector %s does not sign in (its server is plain HTTP beyond this machine)", cc.Name)
	}
	defer s.Close()
	signed, err := s.Signed(ctx)
	if err != nil {
		return err
	}
	if err := s.SignOut(ctx); err != nil {
		return sc.Error(fmt.Errorf("logout %s: %w", cc.Name, err))
	}
	if signed {
		fmt.Fprintf(env.Stdout, "Signed out of %s: its tokens are forgotten (and revoked, where its authorization server offers that).\n", cc.Name)
	} else {
		fmt.Fprintf(env.Stdout, "%s was not signed in; nothing is kept for it now.\n", cc.Name)
	}
	return nil
}

// urlCheck is check --url's flags.
type urlCheck struct {
	url, call, args            string
	sse, noBrowser             bool
	clientID, clientSecretFile string
	clientMetadataURL, scopes  string
	grant, privateKey          string
	elicitation                string
	headers                    map[string]string // --header "Name: value", repeated
}

// urlFlags adds check --url's flags to fs.
func urlFlags(fs *flag.FlagSet) *urlCheck {
	u := &urlCheck{headers: map[string]string{}}
	fs.StringVar(&u.url, "url", "", "check one remote MCP server at this URL, without a config file: connect, sign in when it needs it (in the browser), list its tools")
	fs.BoolVar(&u.sse, "sse", false, "with --url: the server speaks the legacy SSE transport")
	fs.StringVar(&u.call, "call", "", "with --url: then call this tool (its name on the server) and print the result")
	fs.StringVar(&u.args, "args", "{}", "with --call: the tool's arguments, a JSON object")
	fs.Func("header", "with --url: a header for every request, \"Name: value\" (repeatable)", func(v string) error {
		name, value, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("want \"Name: value\", got %q", v)
		}
		u.headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
		return nil
	})
	fs.StringVar(&u.elicitation, "elicitation", "", "with --call: answer the server's requests for input (elicitation) by accepting the defaults its schema gives (defaults) or by declining (decline); without it, none is declared")
	fs.BoolVar(&u.noBrowser, "no-browser", false, "with --url: print the sign-in URL without opening a browser")
	fs.StringVar(&u.clientID, "oauth-client-id", "", "with --url: a client registered with the server's authorization server (oauth.client_id)")
	fs.StringVar(&u.clientSecretFile, "oauth-client-secret-file", "", "with --url: a file holding that client's secret (oauth.client_secret)")
	fs.StringVar(&u.clientMetadataURL, "oauth-client-metadata-url", "", "with --url: the HTTPS URL of a client ID metadata document (oauth.client_metadata_url)")
	fs.StringVar(&u.scopes, "oauth-scopes", "", "with --url: the scopes to ask for, separated by spaces or commas (oauth.scopes)")
	fs.StringVar(&u.grant, "oauth-grant", "", "with --url: authorization_code (a person signs in, the default) or client_credentials (oauth.grant)")
	fs.StringVar(&u.privateKey, "oauth-private-key", "", "with --url: a PEM private key file; the client authenticates by private_key_jwt (oauth.private_key)")
	return u
}

// connector is the url connector check --url checks.
func (u *urlCheck) connector() (config.Connector, error) {
	p, err := url.Parse(u.url)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return config.Connector{}, usagef("check: --url wants an http(s) URL such as https://example.com/mcp, got %q", u.url)
	}
	cc := config.Connector{Name: "remote", SourceName: "remote", Kind: config.KindHTTP, URL: u.url, SSE: u.sse, Headers: u.headers}
	if u.sse {
		cc.Kind = config.KindSSE
	}
	o := &config.OAuth{ClientID: u.clientID, ClientMetadataURL: u.clientMetadataURL, Grant: u.grant, PrivateKey: u.privateKey}
	if u.clientSecretFile != "" {
		b, err := config.ReadKeyFile(u.clientSecretFile)
		if err != nil {
			return cc, usagef("check: --oauth-client-secret-file: %v", err)
		}
		o.ClientSecret = strings.TrimSpace(string(b))
	}
	o.Scopes = strings.FieldsFunc(u.scopes, func(r rune) bool { return r == ' ' || r == ',' })
	switch o.Grant {
	case "", oauth.GrantAuthorizationCode, oauth.GrantClientCredentials:
	default:
		return cc, usagef("check: --oauth-grant wants authorization_code or client_credentials, got %q", o.Grant)
	}
	if o.ClientID != "" || o.ClientSecret != "" || o.ClientMetadataURL != "" || o.Grant != "" || o.PrivateKey != "" || len(o.Scopes) > 0 {
		cc.OAuth = o
	}
	return cc, nil
}

// checkURL checks one remote server without a config file: it connects,
// signs in when the server wants it (opening the browser: the person ran
// the command to do that), lists the tools and, with --call, calls one.
// The tokens are not kept: they live in memory, sealed with a key made
// for the run.
func checkURL(ctx context.Context, u *urlCheck, env Env, log *slog.Logger) error {
	cc, err := u.connector()
	if err != nil {
		return err
	}
	var args json.RawMessage
	if u.call != "" {
		if err := json.Unmarshal([]byte(u.args), &args); err != nil || !strings.HasPrefix(strings.TrimSpace(u.args), "{") {
			return usagef("check: --args wants a JSON object, got %q", u.args)
		}
	}
	key := make([]byte, oauth.KeySize)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	sealer, err := oauth.NewSealer(key)
	if err != nil {
		return err
	}
	// Its secrets are those of a configuration with it alone: the
	// client secret, the credentials and query values of its URL and its
	// headers' credentials.
	sc := scrub.New((&config.Config{Connectors: []config.Connector{cc}}).Secrets()...)
	log = slog.New(scrub.NewHandler(log.Handler(), sc))
	mc, err := app.RemoteConfig(cc, oauth.NewMemoryStore(), sealer, sc, log)
	if err != nil {
		return usageError{err}
	}
	// There is no connector to log in to nor a config file to edit here:
	// the advice is this command's.
	mc.SignInHint = "check --url signs in next (in the browser; --no-browser prints the link)"
	mc.TokenHint = `if it wants a token of its own, pass it with --header "Authorization: Bearer TOKEN"`
	switch u.elicitation {
	case "":
	case "defaults":
		mc.Elicit = func(_ context.Context, message string, schema json.RawMessage) (string, map[string]any, error) {
			content := schemaDefaults(schema)
			log.Info("the server asked for input; answered with the schema's defaults", "message", sc.String(clean(message)), "content", len(content))
			return "accept", content, nil
		}
	case "decline":
		mc.Elicit = func(_ context.Context, message string, _ json.RawMessage) (string, map[string]any, error) {
			log.Info("the server asked for input; declined", "message", sc.String(clean(message)))
			return "decline", nil, nil
		}
	default:
		return usagef("check: --elicitation wants defaults or decline, got %q", u.elicitation)
	}
	conn, err := mcp.Open(ctx, mc)
	if err != nil {
		return usageError{err}
	}
	defer conn.Close()
	// What the server sends is shown as check shows a configured
	// connector's: scrubbed, its hidden characters escaped.
	show := func(s string) string { return visible.Escape(sc.String(s)) }
	shown := redactedURL(u.url)
	fmt.Fprintf(env.Stdout, "server: %s\n", shown)
	for signIns := 0; ; {
		tools, err := conn.Tools(ctx)
		var res connectors.Result
		var out json.RawMessage
		if err == nil && u.call != "" {
			if res, err = conn.Call(ctx, u.call, args); err == nil {
				out, err = json.Marshal(res)
			}
		}
		if sr, ok := connectors.AsSignInRequired(err); ok && signIns < maxSignIns {
			signIns++
			fmt.Fprintf(env.Stdout, "%s needs a sign-in: %s\n", shown, show(sr.Reason))
			if err := signInOnce(ctx, conn, shown, env.Stdout, !u.noBrowser, log); err != nil {
				fmt.Fprintf(env.Stdout, "✗ sign-in: %s\n", show(err.Error()))
				return exitError{ExitFailure}
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(env.Stdout, "✗ %s\n", show(err.Error()))
			return exitError{ExitFailure}
		}
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.SourceName)
		}
		sort.Strings(names)
		name, version := conn.ServerInfo()
		fmt.Fprintf(env.Stdout, "✓ %s %s: %d tools: %s\n", show(name), show(version), len(names), show(strings.Join(names, ", ")))
		if u.call != "" {
			fmt.Fprintf(env.Stdout, "%s: %s\n", visible.Escape(u.call), show(string(out)))
			if res.IsError {
				return exitError{ExitFailure}
			}
		}
		fmt.Fprintln(env.Stdout, "ok")
		return nil
	}
}

// redactedURL is a URL without its user information and query.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// signInNeeded reports, for check, which connectors need a sign-in: the
// SignInRequired of each that does, by name.
func signInNeeded(ctx context.Context, conns []connectors.Connector) map[string]*connectors.SignInRequired {
	out := map[string]*connectors.SignInRequired{}
	for _, c := range conns {
		s := c.Capabilities().SignIner
		if s == nil || c.Capabilities().PerUser {
			continue // (each person signs in to a per-user connector for themselves: see check)
		}
		_, err := c.Tools(ctx)
		if sr, ok := connectors.AsSignInRequired(err); ok {
			out[c.Name()] = sr
			continue
		}
		if sr, err := s.NeedsSignIn(ctx); err == nil && sr != nil {
			out[c.Name()] = sr
		} else if err != nil && !errors.Is(err, context.Canceled) {
			out[c.Name()] = &connectors.SignInRequired{Connector: c.Name(), Reason: err.Error()}
		}
	}
	return out
}

// schemaDefaults is the content an elicitation gets when its form is
// accepted untouched: each property's default (SEP-1034).
func schemaDefaults(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	content := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return content
	}
	for name, p := range s.Properties {
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	return content
}

// clean makes a server's text one bounded line for a log.
func clean(s string) string {
	return short.Clip(strings.Join(strings.Fields(s), " "), 200)
}
