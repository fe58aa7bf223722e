package config

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

// parsed is a decoded connector and where it was written.
type parsed struct {
	c   Connector
	fp  fieldPath
	pos pos
}

// kindKeys are the keys that choose a native connector's kind, exactly one
// of which must be present.
var kindKeys = []string{"builtin", "command", "url", "openapi"}

// keySpec is a connector key and the kinds it applies to.
type keySpec struct {
	key   string
	kinds []Kind
}

// connectorKeys lists the keys of a native connector and the kinds they
// apply to (nil: every kind). A url connector counts as KindHTTP here.
var connectorKeys = []keySpec{
	{"builtin", []Kind{KindBuiltin}},
	{"command", []Kind{KindStdio}},
	{"args", []Kind{KindStdio}},
	{"env", []Kind{KindStdio}},
	{"cwd", []Kind{KindStdio}},
	{"inherit_env", []Kind{KindStdio}},
	{"url", []Kind{KindHTTP}},
	{"sse", []Kind{KindHTTP}},
	{"oauth", []Kind{KindHTTP}},
	{"credentials", []Kind{KindHTTP}},
	{"headers", []Kind{KindHTTP, KindOpenAPI}},
	{"openapi", []Kind{KindOpenAPI}},
	{"base_url", []Kind{KindOpenAPI}},
	{"auth", []Kind{KindOpenAPI}},
	{"operations", []Kind{KindOpenAPI}},
	{"tools", []Kind{KindBuiltin, KindStdio, KindHTTP}},
	{"forward_unknown", []Kind{KindStdio, KindHTTP}},
	{"start_timeout", []Kind{KindStdio, KindHTTP}},
	{"approve", nil},
	{"no_approve", nil},
	{"revert", nil},
	{"approvers", nil},
	{"timeout", nil},
	{"description", nil},
}

// kindWord is how a file says which kind a connector is.
func kindWord(k Kind) string {
	switch k {
	case KindBuiltin:
		return "builtin"
	case KindStdio:
		return "command"
	case KindHTTP, KindSSE:
		return "url"
	case KindOpenAPI:
		return "openapi"
	}
	return k.String()
}

// article prefixes a kind word with its article ("a url", "an openapi").
func article(w string) string {
	if w == "openapi" {
		return "an " + w
	}
	return "a " + w
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

const kindChoice = "builtin (a native connector), command (a stdio MCP server), url (an MCP server over HTTP) or openapi (an OpenAPI document)"

// connectors decodes the native `connectors:` mapping.
func (d *decoder) connectors(n *node, fp fieldPath) []parsed {
	var out []parsed
	for _, e := range d.entries(n, fp) {
		if p, ok := d.connector(e, fp.key(e.key)); ok {
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
	all := make([]string, len(connectorKeys))
	for i, k := range connectorKeys {
		all[i] = k.key
	}
	nerr := len(d.errs)
	var chosen []entry
	for _, f := range e.val.entries {
		switch {
		case slices.Contains(kindKeys, f.key):
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
	kind := map[string]Kind{"builtin": KindBuiltin, "command": KindStdio, "url": KindHTTP, "openapi": KindOpenAPI}[chosen[0].key]

	for _, f := range e.val.entries {
		i := slices.IndexFunc(connectorKeys, func(k keySpec) bool { return k.key == f.key })
		switch {
		case i < 0:
			// reported above
		case connectorKeys[i].kinds != nil && !slices.Contains(connectorKeys[i].kinds, kind):
			var words []string
			for _, k := range connectorKeys[i].kinds {
				words = append(words, kindWord(k))
			}
			d.errAt(f.keyPos, fp.key(f.key), fmt.Sprintf("%s does not apply to %s connector (only to %s connectors)",
				f.key, article(kindWord(kind)), orList(words)))
		default:
			if kind != KindOpenAPI && (f.key == "approve" || f.key == "no_approve") {
				d.noPathGlobs(f.val, fp.key(f.key))
			}
			d.connectorField(&c, f, fp.key(f.key))
		}
	}
	c.Kind = kind
	if kind == KindHTTP && c.SSE {
		c.Kind = KindSSE
	}
	if c.OAuth != nil {
		for h := range c.Headers {
			if strings.EqualFold(h, "Authorization") {
				i := slices.IndexFunc(e.val.entries, func(f entry) bool { return f.key == "oauth" })
				d.errAt(e.val.entries[i].keyPos, fp.key("oauth"), "oauth and an Authorization header exclude each other: with the header, codemode-mcp sends it as it is and never signs in")
			}
		}
	}
	if c.Credentials == CredentialsPerUser {
		d.checkPerUser(e, fp, c)
	}
	p.c = c
	return p, len(d.errs) == nerr
}

// perUserAt is where a connector asked for credentials: per_user, checked
// against server.auth once the whole file is read (checkServerAuth).
type perUserAt struct {
	fp fieldPath
	at pos
}

// checkPerUser refuses credentials: per_user where no person could sign
// in for themselves: a client credentials grant (the client is nobody in
// particular), or an Authorization header (one credential for everyone).
func (d *decoder) checkPerUser(e entry, fp fieldPath, c Connector) {
	at := e.keyPos
	if i := slices.IndexFunc(e.val.entries, func(f entry) bool { return f.key == "credentials" }); i >= 0 {
		at = e.val.entries[i].keyPos
	}
	if c.TokenExchange != nil && c.OAuth != nil {
		d.errAt(at, fp.key("credentials"), "token_exchange and oauth exclude each other: with token exchange nobody signs in to the server, each person's own token is traded for one")
	}
	if c.OAuth != nil && c.OAuth.Grant == "client_credentials" {
		d.errAt(at, fp.key("credentials"), "per_user needs a person to sign in, and oauth.grant: client_credentials has none: use grant: authorization_code (the default), or credentials: shared")
	}
	for h := range c.Headers {
		if strings.EqualFold(h, "Authorization") {
			d.errAt(at, fp.key("credentials"), "per_user and an Authorization header exclude each other: the header is one credential for everyone")
		}
	}
}

// connectorField decodes one key of a native connector.
func (d *decoder) connectorField(c *Connector, e entry, fp fieldPath) {
	n := e.val
	switch e.key {
	case "builtin":
		if v, ok := d.nonEmptySetting(n, fp); ok {
			if !slices.Contains(builtins, v) {
				d.errAt(n.pos, fp, fmt.Sprintf("unknown builtin %q%s; known: %s", v, didYouMean(v, builtins), strings.Join(builtins, ", ")))
				return
			}
			c.Builtin = v
		}
	case "command":
		c.Command, _ = d.nonEmptySetting(n, fp)
	case "args":
		c.Args = d.strList(n, fp)
	case "env":
		c.Env = d.env(n, fp)
	case "cwd":
		if v, ok := d.nonEmptySetting(n, fp); ok {
			c.Cwd = d.resolvePath(v)
		}
	case "inherit_env":
		c.Inherit = d.inherit(n, fp)
	case "url":
		c.URL, _ = d.httpURL(n, fp)
	case "sse":
		c.SSE, _ = d.boolean(n, fp)
	case "headers":
		c.Headers = d.strMap(n, fp, true)
	case "oauth":
		c.OAuth = d.oauth(n, fp)
	case "credentials":
		d.credentials(c, n, fp)
		if c.PerUser() {
			d.perUser = append(d.perUser, perUserAt{fp: fp, at: n.pos})
		}
	case "openapi":
		v, ok := d.nonEmptySetting(n, fp)
		switch {
		case !ok:
		case isHTTPURL(v):
			c.OpenAPI, _ = d.httpURL(n, fp)
		case strings.Contains(v, "://"):
			d.errAt(n.pos, fp, fmt.Sprintf("expected a file path or an http(s) URL, got %q", v))
		default:
			c.OpenAPI = d.resolvePath(v)
		}
	case "base_url":
		c.BaseURL, _ = d.httpURL(n, fp)
	case "auth":
		c.Auth = d.auth(n, fp)
	case "operations":
		c.Operations = d.filter(n, fp)
	default:
		d.commonField(c, e, fp)
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
		if item.kind == scalarNode && strings.HasPrefix(item.text, connectors.PathPattern) {
			d.errAt(item.pos, fp.index(i), fmt.Sprintf("%q: %s patterns match HTTP paths, which only the methods of OpenAPI connectors have", item.text, connectors.PathPattern))
		}
	}
}

// commonField decodes the keys every connector (native or client entry)
// may have; it reports whether key was one of them.
func (d *decoder) commonField(c *Connector, e entry, fp fieldPath) bool {
	n := e.val
	switch e.key {
	case "tools":
		c.Tools = d.filter(n, fp)
	case "forward_unknown":
		c.ForwardUnknown, _ = d.boolean(n, fp)
	case "approve":
		c.Approve = d.globs(n, fp)
	case "no_approve":
		c.NoApprove = d.globs(n, fp)
	case "revert":
		c.Revert = d.revert(n, fp)
	case "approvers":
		a := d.approvers(n, fp)
		c.Approvers = &a
	case "timeout":
		c.Timeout, _ = d.duration(n, fp)
	case "start_timeout":
		c.StartTimeout, _ = d.positiveDuration(n, fp)
	case "description":
		c.Description, _ = d.setting(n, fp)
	default:
		return false
	}
	return true
}

// env decodes environment variables for a subprocess.
func (d *decoder) env(n *node, fp fieldPath) map[string]string {
	m := d.strMap(n, fp, true)
	for _, e := range n.entries {
		if e.key == "" || strings.ContainsAny(e.key, "=\x00") {
			d.errAt(e.keyPos, fp.key(e.key), fmt.Sprintf("bad environment variable name %q", e.key))
		}
	}
	return m
}

// ReservedEnvPrefix starts the names of codemode-mcp's own environment
// variables (CODEMODE_TOKEN, CODEMODE_CONFIG, …), which a downstream never
// inherits.
const ReservedEnvPrefix = "CODEMODE_"

// inherit decodes inherit_env: true, false, or a list of variable names.
// The values of the variables named are kept as possible secrets
// (Config.EnvValues); with true, which passes the whole environment, none
// are: every variable of codemode-mcp's own environment would be.
func (d *decoder) inherit(n *node, fp fieldPath) Inherit {
	if n.kind == scalarNode {
		all, _ := d.boolean(n, fp)
		return Inherit{All: all}
	}
	if n.kind != seqNode && n.kind != nullNode {
		d.typeErr(n, fp, `true, false or a list of variable names such as ["GITHUB_TOKEN"]`)
		return Inherit{}
	}
	var in Inherit
	for i, name := range d.settingList(n, fp) {
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"):
			d.errAt(n.items[i].pos, fp.index(i), fmt.Sprintf("bad environment variable name %q", name))
		case strings.HasPrefix(strings.ToUpper(name), ReservedEnvPrefix):
			d.errAt(n.items[i].pos, fp.index(i), fmt.Sprintf("%s: codemode-mcp's own %s* variables are never passed to a downstream server (set a value under env: if one needs it)", name, ReservedEnvPrefix))
		default:
			in.Names = append(in.Names, name)
			// The server is given this variable's value: it is as secret
			// as one written under env.
			if v, ok := d.vars.lookup(name); ok && v != "" {
				d.envValues = append(d.envValues, v)
			}
		}
	}
	return in
}

// revert decodes tool -> JavaScript expression; values are code and are
// not ${…}-expanded.
func (d *decoder) revert(n *node, fp fieldPath) map[string]string {
	m := d.strMap(n, fp, false)
	for _, e := range n.entries {
		if v, ok := m[e.key]; ok && strings.TrimSpace(v) == "" {
			d.errAt(e.val.pos, fp.key(e.key), `must be a JavaScript expression such as "(args, result) => …"`)
		}
	}
	return m
}

// filter decodes {include: [...], exclude: [...]} or, as a shorthand, a
// list of globs to include.
func (d *decoder) filter(n *node, fp fieldPath) Filter {
	var f Filter
	switch n.kind {
	case seqNode:
		f.Include = d.globs(n, fp)
		return f
	case mapNode, nullNode:
	default:
		d.typeErr(n, fp, `{include: [globs], exclude: [globs]} or a list of globs`)
		return f
	}
	d.object(n, fp, []field{
		{"include", func(n *node, fp fieldPath) { f.Include = d.globs(n, fp) }},
		{"exclude", func(n *node, fp fieldPath) { f.Exclude = d.globs(n, fp) }},
	})
	return f
}

// authChoice lists the kinds of auth.
const authChoice = "{bearer: …}, {basic: {username, password}}, {api_key: {in, name, value}} or {oauth2: {token_url, client_id, client_secret, scopes}}"

// auth decodes an OpenAPI connector's credentials: exactly one of bearer,
// basic {username, password}, api_key {in, name, value} or oauth2
// {token_url, client_id, client_secret, scopes}.
func (d *decoder) auth(n *node, fp fieldPath) *Auth {
	if !d.mapping(n, fp, authChoice) {
		return nil
	}
	a := &Auth{}
	var set []string
	d.object(n, fp, []field{
		{"bearer", func(n *node, fp fieldPath) {
			set = append(set, "bearer")
			a.Bearer, _ = d.nonEmpty(n, fp)
		}},
		{"basic", func(n *node, fp fieldPath) {
			set = append(set, "basic")
			if !d.mapping(n, fp, "{username, password}") {
				return
			}
			b := &BasicAuth{}
			var hasUser bool
			d.object(n, fp, []field{
				{"username", func(n *node, fp fieldPath) { b.Username, hasUser = d.nonEmpty(n, fp) }},
				{"password", func(n *node, fp fieldPath) { b.Password, _ = d.str(n, fp) }},
			})
			if !hasUser && !hasKey(n, "username") {
				d.errAt(n.pos, fp, "needs username (and password)")
			}
			a.Basic = b
		}},
		{"api_key", func(n *node, fp fieldPath) {
			set = append(set, "api_key")
			if !d.mapping(n, fp, "{in, name, value}") {
				return
			}
			k := &APIKey{In: "header"}
			d.object(n, fp, []field{
				{"in", func(n *node, fp fieldPath) {
					if v, ok := d.oneOf(n, fp, "header", "query", "cookie"); ok {
						k.In = v
					}
				}},
				{"name", func(n *node, fp fieldPath) { k.Name, _ = d.nonEmptySetting(n, fp) }},
				{"value", func(n *node, fp fieldPath) { k.Value, _ = d.nonEmpty(n, fp) }},
			})
			if !hasKey(n, "name") || !hasKey(n, "value") {
				d.errAt(n.pos, fp, "needs name and value (and in: header, query or cookie; default header)")
			}
			a.APIKey = k
		}},
		{"oauth2", func(n *node, fp fieldPath) {
			set = append(set, "oauth2")
			if !d.mapping(n, fp, "{token_url, client_id, client_secret, scopes}") {
				return
			}
			o := &OAuth2{}
			d.object(n, fp, []field{
				{"token_url", func(n *node, fp fieldPath) { o.TokenURL, _ = d.httpURL(n, fp) }},
				{"client_id", func(n *node, fp fieldPath) { o.ClientID, _ = d.nonEmpty(n, fp) }},
				{"client_secret", func(n *node, fp fieldPath) { o.ClientSecret, _ = d.nonEmpty(n, fp) }},
				{"scopes", func(n *node, fp fieldPath) { o.Scopes = d.settingList(n, fp) }},
			})
			if !hasKey(n, "token_url") || !hasKey(n, "client_id") || !hasKey(n, "client_secret") {
				d.errAt(n.pos, fp, "needs token_url, client_id and client_secret (and optionally scopes)")
			}
			a.OAuth2 = o
		}},
	})
	switch {
	case len(set) == 0:
		d.errAt(n.pos, fp, "needs one of bearer, basic, api_key or oauth2")
		return nil
	case len(set) > 1:
		d.errAt(n.pos, fp, fmt.Sprintf("takes exactly one of bearer, basic, api_key or oauth2; got %s", strings.Join(set, " and ")))
	}
	return a
}

// scopeList decodes a list of OAuth scopes, each one word.
func (d *decoder) scopeList(n *node, fp fieldPath) []string {
	var out []string
	for i, sc := range d.strList(n, fp) {
		if sc == "" || strings.ContainsAny(sc, " \t\"\\") {
			d.errAt(n.items[i].pos, fp.index(i), fmt.Sprintf("a scope is one word without spaces or quotes; got %q", sc))
			continue
		}
		out = append(out, sc)
	}
	return out
}

// credentialsChoice says what credentials: takes.
const credentialsChoice = "shared, per_user, or {per_user: token_exchange, token_endpoint, client_id, client_secret, audience, scopes}"

// credentials decodes a url connector's credentials: shared (the
// default), per_user (each person signs in), or a mapping whose per_user
// is token_exchange (each person's own token at the team's issuer traded
// for the server's, RFC 8693).
func (d *decoder) credentials(c *Connector, n *node, fp fieldPath) {
	if n.kind != mapNode {
		if v, ok := d.oneOf(n, fp, CredentialsShared, CredentialsPerUser); ok {
			c.Credentials = v
		}
		return
	}
	x := &TokenExchange{}
	kind := ""
	d.object(n, fp, []field{
		{"per_user", func(n *node, fp fieldPath) { kind, _ = d.oneOf(n, fp, "token_exchange") }},
		{"token_endpoint", func(n *node, fp fieldPath) { x.TokenEndpoint, _ = d.httpURL(n, fp) }},
		{"client_id", func(n *node, fp fieldPath) { x.ClientID, _ = d.nonEmpty(n, fp) }},
		{"client_secret", func(n *node, fp fieldPath) { x.ClientSecret, _ = d.nonEmpty(n, fp) }},
		{"audience", func(n *node, fp fieldPath) { x.Audience, _ = d.nonEmpty(n, fp) }},
		{"scopes", func(n *node, fp fieldPath) { x.Scopes = d.scopeList(n, fp) }},
	})
	var missing []string
	for _, m := range []struct{ key, v string }{{"per_user", kind}, {"token_endpoint", x.TokenEndpoint}, {"client_id", x.ClientID}} {
		if m.v == "" {
			missing = append(missing, m.key)
		}
	}
	if len(missing) > 0 {
		d.errAt(n.pos, fp, "token exchange needs "+strings.Join(missing, ", ")+": "+credentialsChoice)
		return
	}
	c.Credentials, c.TokenExchange = CredentialsPerUser, x
}

// oauthChoice lists an oauth: map's keys.
const oauthChoice = "{client_id, client_secret, client_metadata_url, scopes, grant, private_key}"

// oauth decodes a url connector's oauth: map (every key optional) and
// checks that it makes sense together: a secret or key needs a client id,
// the client credentials grant needs a client id and a secret or key, a
// client ID metadata document is an https URL with a path, and a private
// key file holds a key codemode-mcp can sign with.
func (d *decoder) oauth(n *node, fp fieldPath) *OAuth {
	if !d.mapping(n, fp, oauthChoice) {
		return nil
	}
	o := &OAuth{}
	var keyPos, metaPos pos
	d.object(n, fp, []field{
		{"client_id", func(n *node, fp fieldPath) { o.ClientID, _ = d.nonEmpty(n, fp) }},
		{"client_secret", func(n *node, fp fieldPath) { o.ClientSecret, _ = d.nonEmpty(n, fp) }},
		{"client_metadata_url", func(n *node, fp fieldPath) {
			v, ok := d.httpURL(n, fp)
			if !ok {
				return
			}
			if u, err := url.Parse(v); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
				d.errAt(n.pos, fp, fmt.Sprintf("a client ID metadata document's URL is https with a path, such as \"https://example.com/codemode-mcp.json\"; got %q", v))
				return
			}
			o.ClientMetadataURL, metaPos = v, n.pos
		}},
		{"scopes", func(n *node, fp fieldPath) { o.Scopes = d.scopeList(n, fp) }},
		{"grant", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "authorization_code", "client_credentials"); ok {
				o.Grant = v
			}
		}},
		{"private_key", func(n *node, fp fieldPath) {
			v, ok := d.nonEmpty(n, fp)
			if !ok {
				return
			}
			o.PrivateKey, keyPos = d.resolvePath(v), n.pos
			b, err := ReadKeyFile(o.PrivateKey)
			if err == nil {
				_, _, err = oauth.ParsePrivateKey(b)
			}
			if err != nil {
				d.errAt(n.pos, fp, fmt.Sprintf("private key %s: %v", o.PrivateKey, err))
			}
		}},
	})
	switch {
	case o.ClientSecret != "" && o.PrivateKey != "":
		d.errAt(keyPos, fp.key("private_key"), "client_secret and private_key exclude each other: the client authenticates with one")
	case (o.ClientSecret != "" || o.PrivateKey != "") && o.ClientID == "":
		d.errAt(n.pos, fp, "client_secret and private_key need the client_id they belong to")
	case o.Grant == "client_credentials" && (o.ClientID == "" || o.ClientSecret == "" && o.PrivateKey == ""):
		d.errAt(n.pos, fp, "grant client_credentials needs client_id and client_secret (or private_key): no person signs in")
	case o.Grant == "client_credentials" && o.ClientMetadataURL != "":
		d.errAt(metaPos, fp.key("client_metadata_url"), "client_metadata_url is for a person's sign-in, not for grant client_credentials")
	}
	return o
}

// maxKeyFile bounds a private key file read.
const maxKeyFile = 64 << 10

// ReadKeyFile reads a private key file: a regular file of at most 64 KiB.
func ReadKeyFile(path string) ([]byte, error) {
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
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("%s is larger than %d KiB: not a key", path, maxKeyFile>>10)
	}
	return b, nil
}

// mapping reports whether n is a mapping or null, reporting a type error
// (expecting want) otherwise.
func (d *decoder) mapping(n *node, fp fieldPath, want string) bool {
	if n.kind == mapNode || n.kind == nullNode {
		return true
	}
	d.typeErr(n, fp, want)
	return false
}

func hasKey(n *node, key string) bool {
	return slices.ContainsFunc(n.entries, func(e entry) bool { return e.key == key })
}

func isHTTPURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// httpURL decodes an absolute http(s) URL.
func (d *decoder) httpURL(n *node, fp fieldPath) (string, bool) {
	v, ok := d.nonEmpty(n, fp)
	if !ok {
		return "", false
	}
	u, err := url.Parse(v)
	if err != nil || !isHTTPURL(v) || u.Host == "" {
		d.errAt(n.pos, fp, fmt.Sprintf("expected an http(s) URL such as \"https://example.com/mcp\", got %q", v))
		return "", false
	}
	return v, true
}

// uniqueConnectors validates names and rejects duplicates (also across
// sections, and after Claude/VS Code names are sanitized).
func (d *decoder) uniqueConnectors(ps []parsed) []Connector {
	seen := map[string]parsed{}
	under := map[string]parsed{} // namespace -> first connector in it
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
		if first, dup := seen[c.Name]; dup {
			d.errAt(p.pos, p.fp, fmt.Sprintf("connector %q%s is already defined at line %d (%s)", c.Name, from, first.pos.line, first.fp))
			continue
		}
		if other, ok := namespaceClash(c.Name, seen, under); ok {
			leaf, nested := other.c.Name, c.Name
			if len(c.Name) < len(leaf) {
				leaf, nested = c.Name, leaf
			}
			d.errAt(p.pos, p.fp, fmt.Sprintf("connector %q clashes with connector %q at line %d (%s): %q cannot be both a connector and the namespace of %q; rename one (for example %q to %q)",
				c.Name, other.c.Name, other.pos.line, other.fp, leaf, nested, leaf, leaf+".core"))
			continue
		}
		seen[c.Name] = p
		for i := range len(c.Name) {
			if c.Name[i] == '.' {
				if _, ok := under[c.Name[:i]]; !ok {
					under[c.Name[:i]] = p
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// namespaceClash finds an earlier connector that name lies under (a
// connector named like one of name's namespaces) or that lies under name
// (under maps each namespace to the first connector in it).
func namespaceClash(name string, seen, under map[string]parsed) (parsed, bool) {
	for i := range len(name) {
		if name[i] == '.' {
			if p, ok := seen[name[:i]]; ok {
				return p, true
			}
		}
	}
	p, ok := under[name]
	return p, ok
}
