package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/codemode-mcp/codemode-mcp/policy"
)

// EnvConfig is the environment variable naming the config file when no
// --config flag is given.
const EnvConfig = "CODEMODE_CONFIG"

// DefaultFile is the file looked for in the working directory.
const DefaultFile = "codemode.yaml"

// Find returns the config file to load: flag when set, else $CODEMODE_CONFIG
// when set, else ./codemode.yaml when it exists, else "" (meaning Default).
// It does not check that an explicitly named file exists: Load reports that.
func Find(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if env := os.Getenv(EnvConfig); env != "" {
		return env, nil
	}
	fi, err := os.Stat(DefaultFile)
	switch {
	case err == nil && fi.IsDir():
		return "", fmt.Errorf("%s is a directory, not a config file", DefaultFile)
	case err == nil:
		return DefaultFile, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	}
	return "", fmt.Errorf("look for %s: %w", DefaultFile, err)
}

// Load reads and parses the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config file %s does not exist: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read config file %s: %w", path, err)
	}
	return Parse(data, path)
}

// Parse parses and validates a configuration. file names it in messages and
// anchors relative paths (store.path, cwd, openapi, envFile); it may be "".
// The error is an *Error, or Errors when there are several problems.
func Parse(data []byte, file string) (*Config, error) {
	return parse(data, file, os.LookupEnv)
}

func parse(data []byte, file string, lookup func(string) (string, bool)) (*Config, error) {
	d := &decoder{file: file}
	if file != "" {
		d.dir = filepath.Dir(file)
		if abs, err := filepath.Abs(d.dir); err == nil {
			d.dir = abs
		}
	}
	home, _ := os.UserHomeDir()
	d.vars = &vars{lookup: lookup}
	clientVars := &vars{lookup: lookup, client: true, workspace: workspaceFolder(d.dir), home: home}

	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM, as Windows editors write
	data = jsoncToJSON(data)                              // VS Code's files have comments
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, d.syntaxError(err)
	}
	root := d.document(f)
	if len(d.errs) > 0 {
		return nil, collect(d.errs)
	}

	cfg := defaults()
	cfg.Path = file
	var cs []parsed
	d.object(root, "", []field{
		{"server", func(n *node, fp fieldPath) { d.server(n, fp, &cfg.Server) }},
		{"store", func(n *node, fp fieldPath) { d.store(n, fp, &cfg.Store) }},
		{"sandbox", func(n *node, fp fieldPath) { d.sandbox(n, fp, &cfg.Sandbox) }},
		{"approvals", func(n *node, fp fieldPath) { d.approvals(n, fp, &cfg.Approvals) }},
		{"telemetry", func(n *node, fp fieldPath) { d.telemetry(n, fp, &cfg.Telemetry) }},
		{"connectors", func(n *node, fp fieldPath) { cs = append(cs, d.connectors(n, fp)...) }},
		{"log", func(n *node, fp fieldPath) { d.log(n, fp, &cfg.Log) }},
		// Claude Desktop, Claude Code and Cursor files.
		{"mcpServers", func(n *node, fp fieldPath) { cs = append(cs, d.clientServers(n, fp, clientVars)...) }},
		// VS Code's mcp.json.
		{"servers", func(n *node, fp fieldPath) { cs = append(cs, d.clientServers(n, fp, clientVars)...) }},
		// VS Code's prompted inputs: ${input:…} references are reported
		// where they are used.
		{"inputs", func(*node, fieldPath) {}},
		// Editors' schema hint.
		{"$schema", func(*node, fieldPath) {}},
		// Claude Desktop's own settings, when its file is used as is.
		{"globalShortcut", func(*node, fieldPath) {}},
		{"preferences", func(*node, fieldPath) {}},
	})
	slices.SortStableFunc(cs, func(a, b parsed) int { return a.pos.line - b.pos.line })
	cfg.Connectors = d.uniqueConnectors(cs)
	d.authToken(cfg, lookup)
	d.checkServerAuth(cfg)
	d.checkServer(cfg)
	if len(d.errs) > 0 {
		return nil, collect(d.errs)
	}
	cfg.Warnings = d.warn
	cfg.EnvValues = append(cfg.EnvValues, d.envValues...)
	return cfg, nil
}

// authToken says where the bearer token comes from: server.auth_token when
// set and not empty, else the environment variable EnvToken.
func (d *decoder) authToken(cfg *Config, lookup func(string) (string, bool)) {
	s := &cfg.Server
	if s.AuthToken == "" {
		cfg.tokenFromEnv(lookup)
		return
	}
	s.AuthTokenFrom = "server.auth_token"
	if d.file != "" {
		s.AuthTokenFrom += " in " + d.file
	}
	if v, ok := lookup(EnvToken); ok && strings.TrimSpace(v) != "" && v != s.AuthToken {
		d.warnAt(d.tokenPos, "server.auth_token", fmt.Sprintf("%s is set too, to another token, and is not used: server.auth_token wins", EnvToken))
	}
}

// syntaxError converts a parser error into an *Error at its position.
func (d *decoder) syntaxError(err error) error {
	var ye interface {
		GetToken() *token.Token
		GetMessage() string
	}
	if errors.As(err, &ye) {
		p := tokPos(ye.GetToken())
		return &Error{File: d.file, Line: p.line, Column: p.col, Msg: "YAML syntax error: " + ye.GetMessage()}
	}
	return &Error{File: d.file, Msg: "YAML syntax error: " + err.Error()}
}

// document returns the root node of the single document in f (an empty
// mapping for an empty file).
func (d *decoder) document(f *ast.File) *node {
	var bodies []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			bodies = append(bodies, doc)
		}
	}
	if len(bodies) == 0 {
		return &node{kind: mapNode}
	}
	if len(bodies) > 1 {
		d.errAt(nodePos(bodies[1].Body), "", "a configuration file holds one YAML document; found another here")
	}
	c := &converter{d: d, anchors: map[string]*node{}}
	root := c.convert(bodies[0].Body, "", 0)
	if root.kind != mapNode && root.kind != nullNode {
		d.typeErr(root, "", "a mapping at the top (server, store, sandbox, approvals, connectors)")
	}
	return root
}

// workspaceFolder is VS Code's ${workspaceFolder} for a file in dir: the
// parent of .vscode (or .cursor), else dir itself.
func workspaceFolder(dir string) string {
	if dir == "" {
		dir, _ = os.Getwd()
		return dir
	}
	switch filepath.Base(dir) {
	case ".vscode", ".cursor":
		return filepath.Dir(dir)
	}
	return dir
}

// resolvePath makes p absolute against the config file's directory; "~/"
// means the home directory. Without a file, p is left relative.
func (d *decoder) resolvePath(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	if p == "" || filepath.IsAbs(p) || d.dir == "" {
		return p
	}
	return filepath.Join(d.dir, p)
}

func (d *decoder) server(n *node, fp fieldPath, s *Server) {
	d.object(n, fp, []field{
		{"name", func(n *node, fp fieldPath) {
			if v, ok := d.nonEmptySetting(n, fp); ok {
				s.Name = v
			}
		}},
		{"transport", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "stdio", "sse", "http"); ok {
				s.Transport = v
			}
		}},
		{"addr", func(n *node, fp fieldPath) {
			v, ok := d.nonEmptySetting(n, fp)
			if !ok {
				return
			}
			if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
				d.errAt(n.pos, fp, fmt.Sprintf("expected host:port such as %q, got %q", DefaultAddr, v))
				return
			}
			s.Addr = v
			d.addrPos = n.pos
		}},
		{"auth_token", func(n *node, fp fieldPath) {
			if v, ok := d.str(n, fp); ok {
				s.AuthToken = v
				d.tokenPos = n.pos
			}
		}},
		{"auth", func(n *node, fp fieldPath) { s.Auth = d.serverAuth(n, fp) }},
		{"allowed_origins", func(n *node, fp fieldPath) { s.AllowedOrigins = d.origins(n, fp) }},
		{"allowed_hosts", func(n *node, fp fieldPath) { s.AllowedHosts = d.hosts(n, fp) }},
		{"tls_cert", func(n *node, fp fieldPath) {
			if v, ok := d.nonEmptySetting(n, fp); ok {
				s.TLSCert = d.resolvePath(v)
				d.tlsPos = n.pos
			}
		}},
		{"tls_key", func(n *node, fp fieldPath) {
			if v, ok := d.nonEmptySetting(n, fp); ok {
				s.TLSKey = d.resolvePath(v)
				d.tlsPos = n.pos
			}
		}},
		{"max_body", func(n *node, fp fieldPath) {
			v, ok := d.size(n, fp)
			if ok && v <= 0 {
				d.errAt(n.pos, fp, "must be a positive size")
				return
			}
			if ok {
				s.MaxBody = v
			}
		}},
		{"read_timeout", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.ReadTimeout = v
			}
		}},
		{"write_timeout", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.WriteTimeout = v
			}
		}},
		{"idle_timeout", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.IdleTimeout = v
			}
		}},
		{"max_connections", func(n *node, fp fieldPath) {
			if v, ok := d.count(n, fp, 1); ok {
				s.MaxConnections = v
			}
		}},
		{"description_budget", func(n *node, fp fieldPath) {
			if v, ok := d.count(n, fp, 0); ok {
				s.DescriptionBudget = v
			}
		}},
		{"start_timeout", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.StartTimeout = v
			}
		}},
	})
}

// origins decodes server.allowed_origins: web origins written
// scheme://host[:port], kept in the form browsers send (lower case, no
// trailing slash).
func (d *decoder) origins(n *node, fp fieldPath) []string {
	var out []string
	for i, v := range d.settingList(n, fp) {
		ifp := fp.index(i)
		if v == "*" || v == "null" {
			d.errAt(n.items[i].pos, ifp, fmt.Sprintf("%q would let any web page drive the server; list the origins (such as \"https://app.example.com\") that may", v))
			continue
		}
		u, err := url.Parse(strings.TrimSuffix(v, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			d.errAt(n.items[i].pos, ifp, fmt.Sprintf("expected an origin such as \"https://app.example.com\" or \"http://localhost:6274\" (scheme, host and port only), got %q", v))
			continue
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out
}

// hosts decodes server.allowed_hosts: host names, optionally with a port,
// as clients write them in the Host header.
func (d *decoder) hosts(n *node, fp fieldPath) []string {
	var out []string
	for i, v := range d.settingList(n, fp) {
		h := strings.ToLower(strings.TrimSpace(v))
		name := h
		if host, port, err := net.SplitHostPort(h); err == nil && port != "" {
			name = host
		}
		if name == "" || strings.ContainsAny(h, "/*@ ?#") {
			d.errAt(n.items[i].pos, fp.index(i), fmt.Sprintf("expected a host name such as \"mcp.example.com\" or \"mcp.example.com:8931\", got %q", v))
			continue
		}
		out = append(out, h)
	}
	return out
}

// checkServer checks the TLS pair and warns about a network listener that
// anyone can reach.
func (d *decoder) checkServer(cfg *Config) {
	s := cfg.Server
	if (s.TLSCert == "") != (s.TLSKey == "") {
		d.errAt(d.tlsPos, "server", "tls_cert and tls_key go together: set both (HTTPS) or neither")
	}
	if s.Transport == "stdio" || s.AuthToken != "" || s.Auth != nil {
		return
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return
	}
	d.warnAt(d.addrPos, "server.addr", fmt.Sprintf("%s listens beyond loopback without auth_token: serve refuses to start unless given --insecure-no-auth (anyone who can reach it could run programs)", s.Addr))
}

func (d *decoder) store(n *node, fp fieldPath, s *Store) {
	d.object(n, fp, []field{
		{"path", func(n *node, fp fieldPath) {
			v, ok := d.nonEmptySetting(n, fp)
			if !ok {
				return
			}
			if v != ":memory:" && !strings.HasPrefix(v, "file:") && !IsPostgresURL(v) {
				v = d.resolvePath(v)
			}
			s.Path = v
		}},
		{"max_executions", func(n *node, fp fieldPath) {
			if v, ok := d.count(n, fp, 1); ok {
				s.MaxExecutions = v
			}
		}},
		{"paused_ttl", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.PausedTTL = v
			}
		}},
		{"max_run_log", func(n *node, fp fieldPath) {
			v, ok := d.size(n, fp)
			if ok && v <= 0 {
				d.errAt(n.pos, fp, "must be a positive size")
				return
			}
			if ok {
				s.MaxRunLog = v
			}
		}},
		{"synchronous", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "normal", "full"); ok {
				s.Synchronous = v
			}
		}},
		{"cache_dir", func(n *node, fp fieldPath) {
			if v, ok := d.nonEmptySetting(n, fp); ok {
				s.CacheDir = d.resolvePath(v)
			}
		}},
		{"lease", func(n *node, fp fieldPath) {
			v, ok := d.positiveDuration(n, fp)
			if ok && v < MinLease {
				d.errAt(n.pos, fp, fmt.Sprintf("must be at least %s (a process renews its lease every third of it)", MinLease))
				return
			}
			if ok {
				s.Lease = v
			}
		}},
		{"audit_retention", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.AuditRetention = v
			}
		}},
		{"postgres", func(n *node, fp fieldPath) {
			d.object(n, fp, []field{
				{"max_conns", func(n *node, fp fieldPath) {
					if v, ok := d.count(n, fp, 1); ok {
						s.Postgres.MaxConns = v
					}
				}},
			})
		}},
	})
}

func (d *decoder) sandbox(n *node, fp fieldPath, s *Sandbox) {
	d.object(n, fp, []field{
		{"timeout", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.Timeout = v
			}
		}},
		{"task_timeout", func(n *node, fp fieldPath) {
			if v, ok := d.positiveDuration(n, fp); ok {
				s.TaskTimeout = v
			}
		}},
		{"memory_limit", func(n *node, fp fieldPath) {
			v, ok := d.size(n, fp)
			if ok && v <= 0 {
				d.errAt(n.pos, fp, "must be a positive size")
				return
			}
			if ok {
				s.MemoryLimit = v
			}
		}},
		{"memory_limiter", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "system", "sampling"); ok {
				s.MemoryLimiter = v
			}
		}},
		{"max_result_chars", func(n *node, fp fieldPath) {
			if v, ok := d.count(n, fp, 1); ok {
				s.MaxResultChars = v
			}
		}},
		{"isolation", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "inprocess", "process"); ok {
				s.Isolation = v
			}
		}},
		{"typecheck", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "off", "tsc"); ok {
				s.TypeCheck = v
			}
		}},
		{"max_calls", func(n *node, fp fieldPath) {
			if v, ok := d.count(n, fp, 0); ok {
				s.MaxCalls = v
			}
		}},
		{"max_stack_depth", func(n *node, fp fieldPath) {
			if v, ok := d.count(n, fp, 0); ok {
				s.MaxStackDepth = v
			}
		}},
	})
}

func (d *decoder) approvals(n *node, fp fieldPath, a *Approvals) {
	d.object(n, fp, []field{
		{"elicitation", func(n *node, fp fieldPath) {
			if v, ok := d.boolean(n, fp); ok {
				a.Elicitation = v
			}
		}},
		{"tools", func(n *node, fp fieldPath) {
			if v, ok := d.boolean(n, fp); ok {
				a.Tools = v
			}
		}},
		{"console", func(n *node, fp fieldPath) {
			if v, ok := d.boolean(n, fp); ok {
				a.Console = v
			}
		}},
		{"approvers", func(n *node, fp fieldPath) {
			a.Approvers = d.approvers(n, fp)
		}},
		{"separation", func(n *node, fp fieldPath) {
			if v, ok := d.boolean(n, fp); ok {
				a.Separation = v
			}
		}},
	})
}

// approvers decodes who approves: {subjects, groups, roles}, each a list
// of names (the token's sub, values of its groups and roles claims).
func (d *decoder) approvers(n *node, fp fieldPath) policy.Approvers {
	var a policy.Approvers
	d.object(n, fp, []field{
		{"subjects", func(n *node, fp fieldPath) { a.Subjects = d.nonEmptyList(n, fp) }},
		{"groups", func(n *node, fp fieldPath) { a.Groups = d.nonEmptyList(n, fp) }},
		{"roles", func(n *node, fp fieldPath) { a.Roles = d.nonEmptyList(n, fp) }},
	})
	return a
}

// nonEmptyList decodes a list of non-empty settings.
func (d *decoder) nonEmptyList(n *node, fp fieldPath) []string {
	return d.list(n, fp, d.nonEmptySetting)
}

func (d *decoder) positiveDuration(n *node, fp fieldPath) (v time.Duration, ok bool) {
	v, ok = d.duration(n, fp)
	if ok && v <= 0 {
		d.errAt(n.pos, fp, "must be a positive duration")
		return 0, false
	}
	return v, ok
}
