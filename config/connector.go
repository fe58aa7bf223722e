package config

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/origin"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
)

// parsed is a decoded connector and where it was written.
type parsed struct {
	c   Connector
	fp  fieldPath
	pos pos
}

// kindKeys are the keys that choose a native connector's kind, exactly one
// of which must be present, and the kind each chooses.
var kindKeys = map[string]Kind{"builtin": KindBuiltin, "command": KindStdio, "url": KindHTTP, "openapi": KindOpenAPI}

// article prefixes a kind word with its article ("a url", "an openapi").
func article(w string) string {
	if w == "openapi" {
		return "an " + w
	}
	return "a " + w
}

const kindChoice = "builtin (a native connector), command (a stdio MCP server), url (an MCP server over HTTP) or openapi (an OpenAPI document)"

// connectors decodes a mapping of connectors (native `connectors:`, or
// another client's servers) with one, which decodes an entry.
func (d *decoder) connectors(n *node, fp fieldPath, one func(entry, fieldPath) (parsed, bool)) []parsed {
	var out []parsed
	for _, e := range d.entries(n, fp) {
		if p, ok := one(e, fp.key(e.key)); ok {
			out = append(out, p)
		}
	}
	return out
}

func (d *decoder) connector(e entry, fp fieldPath) (parsed, bool) {
	c := Connector{Name: e.key, SourceName: e.key, Line: e.keyPos.line}
	p := parsed{fp: fp, pos: e.keyPos}
	switch e.val.kind {
	case nullNode:
		d.errAt(e.keyPos, fp, "empty connector: set one of "+kindChoice)
		return p, false
	case mapNode:
	default:
		d.typeErr(e.val, fp, "a mapping with one of builtin, command, url or openapi")
		return p, false
	}
	all := keys(reflect.TypeFor[Connector]())
	nerr := len(d.errs)
	var chosen []entry
	for _, f := range e.val.entries {
		switch {
		case kindKeys[f.key] != 0:
			chosen = append(chosen, f)
		case !slices.Contains(all, f.key):
			d.unknownKey(f, fp, all)
		}
	}
	switch {
	case len(chosen) == 1:
	case len(d.errs) > nerr:
		// An unknown key is the likelier cause (a typo of command, say).
		return p, false
	case len(chosen) == 0:
		d.errAt(e.keyPos, fp, "no source: set one of "+kindChoice)
		return p, false
	default:
		d.errAt(chosen[1].keyPos, fp.key(chosen[1].key), fmt.Sprintf(
			"a connector has exactly one of builtin, command, url or openapi; this one already has %s (line %d)",
			chosen[0].key, chosen[0].keyPos.line))
		return p, false
	}
	word := chosen[0].key
	kind := kindKeys[word]
	for _, f := range e.val.entries {
		r, known := ruleOf(reflect.TypeFor[Connector](), f.key)
		switch {
		case !known:
			// reported above
		case r.on != nil && !slices.Contains(r.on, word):
			d.errAt(f.keyPos, fp.key(f.key), fmt.Sprintf("%s does not apply to %s connector (only to %s connectors)",
				f.key, article(word), short.OrList(r.on)))
		default:
			if kind != KindOpenAPI && (f.key == "approve" || f.key == "no_approve") {
				d.noPathGlobs(f.val, fp.key(f.key))
			}
			if f.key == "credentials" {
				d.credentials(&c, f.val, fp.key(f.key))
				continue
			}
			d.member(reflect.ValueOf(&c).Elem(), f, fp)
		}
	}
	c.Kind = kind
	if kind == KindHTTP && c.SSE {
		c.Kind = KindSSE
	}
	d.checkSignIn(e.val, fp, c)
	d.checkApprovers(keyAt(e.val, "approvers"), fp.key("approvers"), c.Approvers)
	p.c = c
	return p, len(d.errs) == nerr
}

// checkSignIn refuses what cannot go together in how a url connector
// signs in: an Authorization header is one credential for everyone, sent
// as it is, so neither oauth nor per_user goes with it; per_user needs a
// person to sign in, whom a client credentials grant does not have, and
// token exchange signs nobody in.
func (d *decoder) checkSignIn(n *node, fp fieldPath, c Connector) {
	cred := fp.key("credentials")
	if c.PerUser() && c.TokenExchange != nil && c.OAuth != nil {
		d.errAt(keyAt(n, "credentials"), cred, "token_exchange and oauth exclude each other: with token exchange nobody signs in to the server, each person's own token is traded for one")
	}
	if c.PerUser() && c.OAuth != nil && c.OAuth.Grant == "client_credentials" {
		d.errAt(keyAt(n, "credentials"), cred, "per_user needs a person to sign in, and oauth.grant: client_credentials has none: use grant: authorization_code (the default), or credentials: shared")
	}
	if c.OwnAuthorization() && c.OAuth != nil {
		d.errAt(keyAt(n, "oauth"), fp.key("oauth"), "oauth and an Authorization header exclude each other: with the header, codemode-mcp sends it as it is and never signs in")
	}
	if c.OwnAuthorization() && c.PerUser() {
		d.errAt(keyAt(n, "credentials"), cred, "per_user and an Authorization header exclude each other: the header is one credential for everyone")
	}
}

// credentialsChoice says what credentials: takes.
const credentialsChoice = "shared, per_user, or {per_user: token_exchange, token_endpoint, client_id, client_secret, audience, scopes}"

// credentials decodes a url connector's credentials: shared (the
// default), per_user (each person signs in), or a mapping whose per_user
// is token_exchange (each person's own token at the team's issuer traded
// for the server's, RFC 8693).
func (d *decoder) credentials(c *Connector, n *node, fp fieldPath) {
	d.at[fp] = n.pos
	if n.kind != mapNode {
		if v, ok := d.oneOf(n, fp, CredentialsShared, CredentialsPerUser); ok {
			c.Credentials = v
		}
	} else {
		var x struct {
			PerUser string `cfg:"per_user,oneof=token_exchange"`
			TokenExchange
		}
		d.object(n, fp, reflect.ValueOf(&x).Elem())
		var missing []string
		for _, m := range []struct{ key, v string }{{"per_user", x.PerUser}, {"token_endpoint", x.TokenEndpoint}, {"client_id", x.ClientID}} {
			if m.v == "" {
				missing = append(missing, m.key)
			}
		}
		if len(missing) > 0 {
			d.errAt(n.pos, fp, "token exchange needs "+strings.Join(missing, ", ")+": "+credentialsChoice)
			return
		}
		c.Credentials, c.TokenExchange = CredentialsPerUser, &x.TokenExchange
	}
}

// noPathGlobs refuses path patterns ("path:/admin/*") in the approve or
// no_approve list of a connector whose methods have no HTTP paths (any
// but an OpenAPI connector), where they would never match.
func (d *decoder) noPathGlobs(n *node, fp fieldPath) {
	if n.kind != seqNode {
		return
	}
	for i, item := range n.items {
		if item.scalar() && strings.HasPrefix(item.text, connectors.PathPattern) {
			d.errAt(item.pos, fp.index(i), fmt.Sprintf("%q: %s patterns match HTTP paths, which only the methods of OpenAPI connectors have", item.text, connectors.PathPattern))
		}
	}
}

// checkEnvNames checks the names of environment variables for a
// subprocess (env).
func checkEnvNames(d *decoder, n *node, fp fieldPath, v any) (any, bool) {
	for _, e := range n.entries {
		d.envName(e.keyPos, fp.key(e.key), e.key)
	}
	return v, true
}

// envName reports whether name can name an environment variable, and
// says why not at p.
func (d *decoder) envName(p pos, fp fieldPath, name string) bool {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		d.errAt(p, fp, fmt.Sprintf("bad environment variable name %q", name))
		return false
	}
	return true
}

// decode reads inherit_env: true, false, or a list of variable names.
// The values of the variables named are kept as possible secrets
// (Config.EnvValues); with true, which passes the whole environment, none
// are: every variable of codemode-mcp's own environment would be.
func (in *Inherit) decode(d *decoder, n *node, fp fieldPath) {
	switch {
	case n.scalar():
		in.All, _ = d.boolean(n, fp)
		return
	case n.kind != seqNode && n.kind != nullNode:
		d.typeErr(n, fp, `true, false or a list of variable names such as ["GITHUB_TOKEN"]`)
		return
	}
	for i, item := range n.items {
		name, ok := d.setting(item, fp.index(i))
		switch {
		case !ok || !d.envName(item.pos, fp.index(i), name):
		case strings.HasPrefix(strings.ToUpper(name), connectors.ReservedEnvPrefix):
			d.errAt(item.pos, fp.index(i), fmt.Sprintf("%s: codemode-mcp's own %s* variables are never passed to a downstream server (set a value under env: if one needs it)", name, connectors.ReservedEnvPrefix))
		default:
			in.Names = append(in.Names, name)
			// The server is given this variable's value: it is as secret
			// as one written under env.
			if v, ok := d.vars.lookup(name); ok && v != "" {
				d.envValues = append(d.envValues, v)
			}
		}
	}
}

// checkRevert checks revert's tool -> JavaScript expression; values are
// code and are not ${…}-expanded.
func checkRevert(d *decoder, n *node, fp fieldPath, v any) (any, bool) {
	m := v.(map[string]string)
	for _, e := range n.entries {
		if v, ok := m[e.key]; ok && strings.TrimSpace(v) == "" {
			d.errAt(e.val.pos, fp.key(e.key), `must be a JavaScript expression such as "(args, result) => …"`)
		}
	}
	return m, true
}

// decode reads {include: [...], exclude: [...]} or, as a shorthand, a
// list of globs to include.
func (f *Filter) decode(d *decoder, n *node, fp fieldPath) {
	switch n.kind {
	case seqNode:
		f.Include = d.list(n, fp, rule{globs: true})
	case mapNode, nullNode:
		d.object(n, fp, reflect.ValueOf(f).Elem())
	default:
		d.typeErr(n, fp, `{include: [globs], exclude: [globs]} or a list of globs`)
	}
}

// check says an OpenAPI connector's credentials have exactly one of
// bearer, basic, api_key or oauth2.
func (a *Auth) check(d *decoder, n *node, fp fieldPath) {
	var set []string
	for _, e := range n.entries {
		if slices.Contains(keys(reflect.TypeFor[Auth]()), e.key) {
			set = append(set, e.key)
		}
	}
	switch {
	case len(set) == 0:
		d.errAt(n.pos, fp, "needs one of bearer, basic, api_key or oauth2")
	case len(set) > 1:
		d.errAt(n.pos, fp, fmt.Sprintf("takes exactly one of bearer, basic, api_key or oauth2; got %s", strings.Join(set, " and ")))
	}
}

func (b *BasicAuth) check(d *decoder, n *node, fp fieldPath) {
	if !hasKey(n, "username") {
		d.errAt(n.pos, fp, "needs username (and password)")
	}
}

func (k *APIKey) check(d *decoder, n *node, fp fieldPath) {
	if k.In == "" {
		k.In = "header"
	}
	if !hasKey(n, "name") || !hasKey(n, "value") {
		d.errAt(n.pos, fp, "needs name and value (and in: header, query or cookie; default header)")
	}
}

func (o *OAuth2) check(d *decoder, n *node, fp fieldPath) {
	if !hasKey(n, "token_url") || !hasKey(n, "client_id") || !hasKey(n, "client_secret") {
		d.errAt(n.pos, fp, "needs token_url, client_id and client_secret (and optionally scopes)")
	}
	// The client secret travels to token_url: https, or plain http to this
	// machine only, as for every URL a secret goes to (oauth.CheckURL).
	if tp := fp.key("token_url"); o.TokenURL != "" && oauth.CheckURL(o.TokenURL, "token_url") != nil {
		d.errAt(d.at[tp], tp, "the client secret is sent to it, so it must be https (plain http only to a loopback address), got "+quoteURL(o.TokenURL))
	}
}

// check says a url connector's oauth: map (every key optional) makes
// sense together: a secret or key needs a client id, the client
// credentials grant needs a client id and a secret or key, and a client
// ID metadata document is for a person's sign-in.
func (o *OAuth) check(d *decoder, n *node, fp fieldPath) {
	switch {
	case o.ClientSecret != "" && o.PrivateKey != "":
		d.errAt(d.at[fp.key("private_key")], fp.key("private_key"), "client_secret and private_key exclude each other: the client authenticates with one")
	case (o.ClientSecret != "" || o.PrivateKey != "") && o.ClientID == "":
		d.errAt(n.pos, fp, "client_secret and private_key need the client_id they belong to")
	case o.Grant == "client_credentials" && (o.ClientID == "" || o.ClientSecret == "" && o.PrivateKey == ""):
		d.errAt(n.pos, fp, "grant client_credentials needs client_id and client_secret (or private_key): no person signs in")
	case o.Grant == "client_credentials" && o.ClientMetadataURL != "":
		d.errAt(d.at[fp.key("client_metadata_url")], fp.key("client_metadata_url"), "client_metadata_url is for a person's sign-in, not for grant client_credentials")
	}
}

// checkPrivateKey resolves oauth.private_key against the file's directory
// and checks that it holds a key codemode-mcp can sign with.
func checkPrivateKey(d *decoder, n *node, fp fieldPath, v any) (any, bool) {
	path := d.resolvePath(v.(string))
	b, err := ReadKeyFile(path)
	if err == nil {
		_, err = oauth.ParsePrivateKey(b)
	}
	if err != nil {
		d.errAt(n.pos, fp, fmt.Sprintf("private key %s: %v", path, err))
	}
	return path, true
}

// checkBuiltin checks a builtin connector's name.
func checkBuiltin(v string) error {
	if !slices.Contains(builtins, v) {
		return fmt.Errorf("unknown builtin %q%s; known: %s", v, textdist.DidYouMean(v, builtins), strings.Join(builtins, ", "))
	}
	return nil
}

// checkOpenAPI reads an OpenAPI document's location: an http(s) URL, or a
// path resolved against the file's directory.
func checkOpenAPI(d *decoder, n *node, fp fieldPath, v any) (any, bool) {
	switch s := v.(string); {
	case origin.IsHTTP(s):
		return d.httpURL(n, fp)
	case strings.Contains(s, "://"):
		d.errAt(n.pos, fp, "expected a file path or an http(s) URL, got "+quoteURL(s))
		return nil, false
	default:
		return d.resolvePath(s), true
	}
}

// ReadKeyFile reads a key or a secret file: a regular file of at most
// 64 KiB.
func ReadKeyFile(path string) ([]byte, error) { return readFile(path, 64<<10) }

// readFile reads a regular file of at most limit bytes (a key, a secret,
// an env file): a device or a large file named by mistake is refused.
func readFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return readAtMost(f, path, limit)
}

// readAtMost reads r, the file at path, to its end, or fails once it has
// passed limit bytes.
func readAtMost(r io.Reader, path string, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err == nil && len(b) > limit {
		err = fmt.Errorf("%s is larger than %s", path, short.Bytes(int64(limit)))
	}
	return b, err
}

func hasKey(n *node, key string) bool {
	return slices.ContainsFunc(n.entries, func(e entry) bool { return e.key == key })
}

// keyAt is where key is written in mapping n (where n is when it is not).
func keyAt(n *node, key string) pos {
	if i := slices.IndexFunc(n.entries, func(e entry) bool { return e.key == key }); i >= 0 {
		return n.entries[i].keyPos
	}
	return n.pos
}

// httpURL decodes an absolute http(s) URL.
func (d *decoder) httpURL(n *node, fp fieldPath) (string, bool) {
	v, ok := d.text(n, fp, rule{nonempty: true, secret: true})
	if !ok {
		return "", false
	}
	u, err := url.Parse(v)
	if err != nil || !origin.IsHTTP(v) || u.Host == "" {
		d.errAt(n.pos, fp, "expected an http(s) URL such as \"https://example.com/mcp\", got "+quoteURL(v))
		return "", false
	}
	return v, true
}

// uniqueConnectors validates names and rejects duplicates (also across
// sections, and after Claude/VS Code names are sanitized) and a name that
// is both a connector and the namespace of another.
func (d *decoder) uniqueConnectors(ps []parsed) []Connector {
	var kept []parsed
	var out []Connector
	for _, p := range ps {
		c := p.c
		from := ""
		if c.SourceName != c.Name {
			from = fmt.Sprintf(" (from %q)", c.SourceName)
		}
		if err := connectors.ValidateConnectorName(c.Name); err != nil {
			d.errAt(p.pos, p.fp, err.Error()+from)
			continue
		}
		// The connectors kept clash with none of each other, so at most
		// one of them can be the same name, or either side of a namespace.
		i := slices.IndexFunc(kept, func(q parsed) bool {
			return q.c.Name == c.Name || strings.HasPrefix(q.c.Name, c.Name+".") || strings.HasPrefix(c.Name, q.c.Name+".")
		})
		switch {
		case i < 0:
			kept = append(kept, p)
			out = append(out, c)
		case kept[i].c.Name == c.Name:
			d.errAt(p.pos, p.fp, fmt.Sprintf("connector %q%s is already defined at line %d (%s)", c.Name, from, kept[i].pos.line, kept[i].fp))
		default:
			other := kept[i]
			leaf, nested := other.c.Name, c.Name
			if len(c.Name) < len(leaf) {
				leaf, nested = c.Name, leaf
			}
			d.errAt(p.pos, p.fp, fmt.Sprintf("connector %q clashes with connector %q at line %d (%s): %q cannot be both a connector and the namespace of %q; rename one (for example %q to %q)",
				c.Name, other.c.Name, other.pos.line, other.fp, leaf, nested, leaf, leaf+".core"))
		}
	}
	return out
}
