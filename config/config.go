// Package config reads codemode-mcp's configuration: the native YAML (or
// JSON) format of the README's configuration reference, and the Claude
// Desktop / Claude Code / Cursor / VS Code files ({"mcpServers": …} or
// {"servers": …}) as they are.
//
// Every problem is reported with the file, line, column and dotted field path
// (see Error). Unknown keys are errors, with a suggestion for near misses.
// String values may use ${VAR} and ${VAR:-default}; $$ is a literal dollar.
package config

import (
	"os"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/policy"
)

// Defaults other packages share; defaults() sets every default.
const (
	DefaultAddr          = "127.0.0.1:8931"
	DefaultMaxExecutions = 50
	DefaultPausedTTL     = 24 * time.Hour
	MinLease             = time.Second
	// DefaultDescriptionBudget is server.description_budget's default.
	DefaultDescriptionBudget = 1500
)

// Config is a loaded and validated configuration.
type Config struct {
	// Path is the file it was loaded from ("" for the built-in default).
	Path       string
	Server     Server      `cfg:"server"`
	Store      Store       `cfg:"store"`
	Sandbox    Sandbox     `cfg:"sandbox"`
	Approvals  Approvals   `cfg:"approvals"`
	Telemetry  Telemetry   `cfg:"telemetry"`
	Connectors []Connector // in file order
	// Log is the log section.
	Log Log `cfg:"log"`
	// Warnings are things that are accepted but deserve a word to the user
	// (keys of other MCP clients that are ignored, disabled entries, an
	// unauthenticated listener beyond loopback).
	Warnings []Warning
	// EnvValues are the values the configuration took from the environment
	// where a secret may stand: ${VAR} references in what a connector is
	// given or sends (args, env, URLs, headers, credentials) and in
	// server.auth_token, and the variables inherit_env names. Secrets
	// returns them (but booleans, numbers and absolute paths), so that a
	// token passed as an argument or in a URL's path is scrubbed like one
	// passed in a header. Settings of codemode-mcp's own (names, addresses,
	// paths, globs, numbers, durations, one-of-a-list values) are not
	// collected, even from ${VAR}.
	EnvValues []string
}

// Server configures the MCP server side.
type Server struct {
	Name      string `cfg:"name,nonempty"`                  // default "codemode"
	Transport string `cfg:"transport,oneof=stdio|sse|http"` // default "stdio"
	Addr      string `cfg:"addr,nonempty,check=addr"`       // listen address for sse/http; default 127.0.0.1:8931
	// AuthToken, when non-empty, is the Bearer token required on sse/http
	// (and the console's login). server.auth_token sets it; when that is
	// unset or empty, the environment variable EnvToken does.
	AuthToken string `cfg:"auth_token,secret"`
	// AuthTokenFrom says where AuthToken came from, for the log: the
	// field and file, or EnvToken; "" when there is no token.
	AuthTokenFrom string
	// Auth, when set (server.auth), makes the server an OAuth resource
	// server for the team's issuer instead: AuthToken is then "".
	Auth *ServerAuth `cfg:"auth"`
	// DescriptionBudget is how many tokens of TypeScript declarations the
	// codemode tool's description may carry inline; 0 never inlines them.
	// Default DefaultDescriptionBudget.
	DescriptionBudget int `cfg:"description_budget"`
	// StartTimeout is how long start-up (serve, run, check, console)
	// waits for each downstream MCP server to connect, initialise and
	// list its tools before it goes on without it; a connector's own
	// StartTimeout overrides it. Default 10s.
	StartTimeout time.Duration `cfg:"start_timeout,positive"`

	// HTTP guards and bounds the sse and http transports.
	HTTP
}

// check says tls_cert and tls_key go together.
func (s *Server) check(d *decoder, n *node, fp fieldPath) {
	if (s.TLSCert == "") != (s.TLSKey == "") {
		key := "tls_cert"
		if s.TLSCert == "" {
			key = "tls_key"
		}
		d.errAt(d.at[fp.key(key)], fp, "tls_cert and tls_key go together: set both (HTTPS) or neither")
	}
}

// HTTP configures the HTTP transports. Zero fields take package server's
// defaults.
type HTTP struct {
	// AllowedOrigins are browser origins ("https://app.example.com") that
	// may call the server besides loopback ones; they get CORS headers.
	AllowedOrigins []string `cfg:"allowed_origins,check=origin"`
	// AllowedHosts are Host header values ("mcp.example.com" or
	// "mcp.example.com:8931") served besides loopback names and IP
	// literals.
	AllowedHosts []string `cfg:"allowed_hosts,check=host"`
	// TLSCert and TLSKey are PEM files; with both, the server speaks HTTPS.
	TLSCert string `cfg:"tls_cert,path"`
	TLSKey  string `cfg:"tls_key,path"`
	// MaxBody caps a request body in bytes.
	MaxBody int64 `cfg:"max_body,positive"`
	// ReadTimeout bounds reading a request's headers, and its body;
	// WriteTimeout is how long one write of a response may wait for the
	// client to read; IdleTimeout closes an idle kept-alive connection.
	ReadTimeout  time.Duration `cfg:"read_timeout,positive"`
	WriteTimeout time.Duration `cfg:"write_timeout,positive"`
	IdleTimeout  time.Duration `cfg:"idle_timeout,positive"`
	// MaxConnections caps open connections; more wait to be accepted.
	MaxConnections int `cfg:"max_connections,positive"`
}

// Store configures the durable log.
type Store struct {
	// Path of the SQLite file; a relative path in a file is resolved against
	// the file's directory. "" (the default) means codemode.db in the
	// user's data directory (internal/appdirs). A postgres:// or
	// postgresql:// URL (IsPostgresURL) puts the log in that PostgreSQL
	// database instead, which several replicas may share.
	Path string `cfg:"path,nonempty,check=store"`
	// PathLine is the line of store.path in the file (0 when not set
	// there), which an error opening the store names.
	PathLine      int
	MaxExecutions int           `cfg:"max_executions,positive"` // terminal runs kept; default 50
	PausedTTL     time.Duration `cfg:"paused_ttl,positive"`     // paused runs older than this expire; default 24h
	// MaxRunLog is the quota of one run's log in bytes: the arguments,
	// results and errors its calls and steps keep, over all its passes. A
	// run that would pass it ends in error. Default 64 MiB.
	MaxRunLog   int64  `cfg:"max_run_log,positive"`
	Synchronous string `cfg:"synchronous,oneof=normal|full"` // default "normal"
	// CacheDir holds what can be made again but is worth keeping between
	// starts: fetched OpenAPI documents and the methods derived from them.
	// A relative path in a file is resolved against the file's directory.
	// "" means the user's cache directory (internal/appdirs).
	CacheDir string `cfg:"cache_dir,path"`
	// Lease is how long a process's claim on the runs it works on lasts
	// without renewal: another process recovers them once it lapsed
	// (at once on the same machine when the process is dead). Default
	// 15s, at least 1s.
	Lease time.Duration `cfg:"lease,positive,check=lease"`
	// AuditRetention prunes audit records older than it
	// (store.audit_retention); 0, the default, keeps them all.
	AuditRetention time.Duration `cfg:"audit_retention,positive"`
	// Postgres tunes the connection pool when Path is a PostgreSQL URL.
	Postgres Postgres `cfg:"postgres"`
}

// Postgres configures the PostgreSQL store's connection pool.
type Postgres struct {
	// MaxConns caps the pool's connections; 0 means the driver's default
	// (the larger of 4 and the number of CPUs).
	MaxConns int `cfg:"max_conns,positive"`
}

// IsPostgresURL reports whether a store location (store.path, --db) is a
// PostgreSQL URL rather than a SQLite file path.
func IsPostgresURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Sandbox configures program execution.
type Sandbox struct {
	Timeout time.Duration `cfg:"timeout,positive"` // wall clock per pass; default 60s
	// TaskTimeout is the wall clock per pass of a run started as an MCP
	// task (its client polls it instead of waiting for the call);
	// default 30m.
	TaskTimeout time.Duration `cfg:"task_timeout,positive"`
	MemoryLimit int64         `cfg:"memory_limit,positive"` // bytes; default 256 MiB
	// MemoryLimiter is how a worker is held to MemoryLimit besides its
	// heap watchdog: "system" (the default: this system's own limit) or
	// "sampling" (the server samples each running worker's resident
	// size, as it does on macOS).
	MemoryLimiter  string `cfg:"memory_limiter,oneof=system|sampling"`
	MaxResultChars int    `cfg:"max_result_chars,positive"`         // what the model sees of a result; default 24000
	Isolation      string `cfg:"isolation,oneof=inprocess|process"` // default "process"
	MaxCalls       int    `cfg:"max_calls"`                         // host calls per pass; 0 = sandbox default
	MaxStackDepth  int    `cfg:"max_stack_depth"`                   // JS call stack depth; 0 = sandbox default
	// TypeCheck is "tsc" to type-check every new program with tsgo or
	// tsc (found on PATH) against the declarations before it runs, and
	// refuse it on type errors; "off" (the default) does not.
	TypeCheck string `cfg:"typecheck,oneof=off|tsc"`
}

// Approvals configures how approval requests reach the human.
type Approvals struct {
	// Elicitation asks the user through the client when it supports it.
	// Default true.
	Elicitation bool `cfg:"elicitation"`
	// Tools offers codemode_approve, codemode_reject and codemode_rollback
	// to MCP clients. Default true; false keeps approval away from the
	// model (elicitation and the command line remain).
	Tools bool `cfg:"tools"`
	// Console serves the approval console at / on the sse and http
	// transports. Default true.
	Console bool `cfg:"console"`
	// Approvers decide the pending actions of every connector without
	// approvers of its own, under server.auth (approvals.approvers); the
	// zero value: everyone whose token has codemode:approve.
	Approvers policy.Approvers `cfg:"approvers"`
	// Separation forbids approving a run one started, under server.auth
	// (approvals.separation). Default false.
	Separation bool `cfg:"separation"`
}

// checkApprovers refuses approvers that list nobody ({}): they would be
// everyone whose token has codemode:approve (a connector's, in place of a
// stricter approvals.approvers), which leaving them out says.
func (d *decoder) checkApprovers(at pos, fp fieldPath, a *policy.Approvers) {
	if a != nil && a.IsZero() {
		d.errAt(at, fp, "lists nobody: name subjects, groups or roles (or leave approvers out to let everyone whose token has codemode:approve decide)")
	}
}

// Policy is the policy package's rules as the configuration sets them.
func (c *Config) Policy() *policy.Policy {
	p := &policy.Policy{Approvers: c.Approvals.Approvers, Separation: c.Approvals.Separation}
	for _, cn := range c.Connectors {
		if cn.Approvers != nil {
			if p.Connectors == nil {
				p.Connectors = map[string]policy.Approvers{}
			}
			p.Connectors[cn.Name] = *cn.Approvers
		}
	}
	return p
}

// Connector is one tool source. Exactly one of Builtin, Command, URL and
// OpenAPI is set, as Kind says.
type Connector struct {
	// Name is the connector's global name in the sandbox (validated with
	// connectors.ValidateConnectorName). A dotted name ("github.issues")
	// puts the connector in a namespace: github is then an object holding
	// it and any other github.* connector, and no connector may be named
	// github itself. Names from Claude Desktop / VS Code files are made
	// flat identifiers (dots become '_').
	Name string
	// SourceName is the name as written in the file. It differs from Name
	// only for entries of a Claude Desktop / VS Code file whose names are not
	// identifiers ("server-everything" becomes server_everything).
	SourceName string
	// Line is the line of the connector's key in the file (0 for defaults).
	Line int
	Kind Kind

	// Builtin names a native connector compiled in ("notes").
	Builtin string `cfg:"builtin,nonempty,check=builtin,on=builtin"`

	// Command, Args, Env and Cwd start a stdio MCP server. Its environment
	// is a minimal one (see Inherit) plus Env; Cwd is resolved against the
	// config file's directory.
	Command string            `cfg:"command,nonempty,on=command"`
	Args    []string          `cfg:"args,secret,on=command"`
	Env     map[string]string `cfg:"env,check=envNames,on=command"`
	Cwd     string            `cfg:"cwd,path,on=command"`
	// Inherit says which of the server's own environment variables a stdio
	// server gets besides the minimal set (inherit_env).
	Inherit Inherit `cfg:"inherit_env,on=command"`

	// URL is a streamable-HTTP MCP endpoint, or a legacy SSE endpoint when
	// SSE is set (then Kind is KindSSE). Headers go with every request (also
	// for OpenAPI connectors).
	URL     string            `cfg:"url,url,on=url"`
	SSE     bool              `cfg:"sse,on=url"`
	Headers map[string]string `cfg:"headers,on=url|openapi"`
	// OAuth configures how a url connector signs in to a server that
	// wants OAuth (the MCP authorization specification). Nil is the
	// default: discovery and registration do everything.
	OAuth *OAuth `cfg:"oauth,on=url"`
	// Credentials is whose credentials a url connector's calls carry:
	// CredentialsShared ("" too: the one grant of whoever signed in) or
	// CredentialsPerUser (each person's own grant, under server.auth).
	// Its key also takes the mapping of a token exchange (credentials).
	Credentials string `cfg:"credentials,on=url"`
	// TokenExchange, with Credentials per_user, trades each person's own
	// access token at the team's issuer for one of the server (RFC 8693)
	// instead of a sign-in of their own to it.
	TokenExchange *TokenExchange

	// OpenAPI is the document's path (resolved against the config file's
	// directory) or http(s) URL; BaseURL overrides its servers.
	OpenAPI    string `cfg:"openapi,nonempty,check=openapi,on=openapi"`
	BaseURL    string `cfg:"base_url,url,on=openapi"`
	Auth       *Auth  `cfg:"auth,on=openapi"`
	Operations Filter `cfg:"operations,on=openapi"`

	// Tools selects the MCP or builtin tools exposed (by source name).
	Tools Filter `cfg:"tools,on=builtin|command|url"`
	// Approve lists globs (path.Match syntax) of tool names that need
	// approval in addition to what the source declares.
	Approve []string `cfg:"approve,globs"`
	// ForwardUnknown (MCP connectors) forwards a call of a method the
	// server did not list as a tools/call of that name, for servers whose
	// tools come and go; such calls need approval unless NoApprove
	// matches them, and Tools' globs still apply.
	ForwardUnknown bool `cfg:"forward_unknown,on=command|url"`
	// NoApprove lists globs of tool names that need no approval although
	// the source says they do (an OpenAPI POST that only searches, say).
	// Approve wins when both match.
	NoApprove []string `cfg:"no_approve,globs"`
	// Approvers, when set (connectors.<name>.approvers), decide this
	// connector's pending actions in place of approvals.approvers.
	Approvers *policy.Approvers `cfg:"approvers"`
	// Revert maps a tool name to a JavaScript expression
	// "(args, result) => …" run during a rollback. Never env-expanded, since
	// JavaScript template literals use ${…}.
	Revert map[string]string `cfg:"revert,raw,check=revert"`
	// Timeout bounds one call; 0 means none.
	Timeout time.Duration `cfg:"timeout"`
	// StartTimeout (MCP servers) is how long start-up waits for this
	// server; 0 means Server.StartTimeout.
	StartTimeout time.Duration `cfg:"start_timeout,positive,on=command|url"`
	// RestartDelay and MaxRestartDelay are the backoff of a connector that
	// is down (an MCP server that exited or could not start, an OpenAPI
	// document that could not be read): tried again after RestartDelay,
	// the wait doubling up to MaxRestartDelay; 0 means 0.5s and 30s.
	RestartDelay    time.Duration `cfg:"restart_delay,positive,on=command|url|openapi"`
	MaxRestartDelay time.Duration `cfg:"max_restart_delay,positive,on=command|url|openapi"`
	// Description is an optional human one-liner.
	Description string `cfg:"description"`
}

// Auth is how an OpenAPI connector authenticates. Exactly one field is set.
type Auth struct {
	Bearer string     `cfg:"bearer,nonempty,secret"`
	Basic  *BasicAuth `cfg:"basic"`
	APIKey *APIKey    `cfg:"api_key"`
	OAuth2 *OAuth2    `cfg:"oauth2"`
}

// Values of Connector.Credentials.
const (
	CredentialsShared  = "shared"
	CredentialsPerUser = "per_user"
)

// TokenExchange is credentials: {per_user: token_exchange, …}: where
// and as which client a person's token is traded for the server's.
type TokenExchange struct {
	// TokenEndpoint is the server's authorization server's token
	// endpoint; ClientID and ClientSecret the client codemode-mcp is
	// there (sent by client_secret_basic).
	TokenEndpoint string `cfg:"token_endpoint,url"`
	ClientID      string `cfg:"client_id,nonempty,secret"`
	ClientSecret  string `cfg:"client_secret,nonempty,secret"`
	// Audience is the RFC 8693 audience asked for ("" for none: the
	// server's URL is always sent as resource); Scopes the scopes.
	Audience string   `cfg:"audience,nonempty,secret"`
	Scopes   []string `cfg:"scopes,secret,check=oauthScope"`
}

// PerUser reports whether the connector's calls carry each person's own
// credentials (credentials: per_user).
func (c Connector) PerUser() bool { return c.Credentials == CredentialsPerUser }

// Remote reports whether the connector is a url connector: an MCP server
// over HTTP or legacy SSE, the only kind that signs in.
func (c Connector) Remote() bool { return c.Kind == KindHTTP || c.Kind == KindSSE }

// OwnAuthorization reports whether the connector sends an Authorization
// header of its own (headers:): one credential for everyone, sent as it
// is, so it never signs in.
func (c Connector) OwnAuthorization() bool {
	for h := range c.Headers {
		if strings.EqualFold(h, "Authorization") {
			return true
		}
	}
	return false
}

// OAuth is a url connector's oauth: map. Every field is optional.
type OAuth struct {
	// ClientID and ClientSecret are a client registered beforehand with
	// the server's authorization server.
	ClientID     string `cfg:"client_id,nonempty,secret"`
	ClientSecret string `cfg:"client_secret,nonempty,secret"`
	// ClientMetadataURL is the HTTPS URL of a Client ID Metadata Document,
	// used as the client id by servers that accept one.
	ClientMetadataURL string `cfg:"client_metadata_url,url,check=metadataURL"`
	// Scopes, when set, are asked for instead of those the server names.
	Scopes []string `cfg:"scopes,secret,check=oauthScope"`
	// Grant is "authorization_code" (a person signs in; the default) or
	// "client_credentials" (machine to machine: ClientID and ClientSecret
	// or PrivateKey).
	Grant string `cfg:"grant,oneof=authorization_code|client_credentials"`
	// PrivateKey is a PEM private key file (resolved against the config
	// file's directory): the client authenticates by private_key_jwt.
	PrivateKey string `cfg:"private_key,nonempty,secret,check=privateKey"`
}

// OAuth2 is the OAuth 2.0 client credentials grant: a token is requested
// from TokenURL with the client's id and secret.
type OAuth2 struct {
	TokenURL     string   `cfg:"token_url,url"`
	ClientID     string   `cfg:"client_id,nonempty,secret"`
	ClientSecret string   `cfg:"client_secret,nonempty,secret"`
	Scopes       []string `cfg:"scopes"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	Username string `cfg:"username,nonempty,secret"`
	Password string `cfg:"password,secret"`
}

// APIKey is a key sent in a header, query parameter or cookie.
type APIKey struct {
	In    string `cfg:"in,oneof=header|query|cookie"` // default "header"
	Name  string `cfg:"name,nonempty"`
	Value string `cfg:"value,nonempty,secret"`
}

// Inherit is a stdio connector's inherit_env: true (All), or a list of
// variable names. CODEMODE_* variables are never inherited.
type Inherit struct {
	All   bool
	Names []string
}

// Filter selects names with globs (path.Match syntax).
type Filter struct {
	Include []string `cfg:"include,globs"`
	Exclude []string `cfg:"exclude,globs"`
}

// EnvToken is the environment variable that sets the bearer token
// (Server.AuthToken) when the configuration sets none, with or without a
// config file: the README's quick start for HTTP sets only it.
const EnvToken = "CODEMODE_TOKEN"

// Default returns the built-in configuration: all defaults and the builtin
// notes connector only, with the token of EnvToken when it is set.
func Default() *Config {
	c := defaults()
	c.Connectors = []Connector{{Name: "notes", SourceName: "notes", Kind: KindBuiltin, Builtin: "notes"}}
	c.tokenFromEnv(os.LookupEnv)
	return c
}

// tokenFromEnv sets the bearer token from EnvToken when the configuration
// sets none. A token in the configuration wins (parse warns when both are
// set and differ). White space around either is dropped (parse trims
// server.auth_token): a token read from a file may end in a newline, and a
// client's Authorization header never carries one, so the token could
// never be presented.
func (c *Config) tokenFromEnv(lookup func(string) (string, bool)) {
	if c.Server.AuthToken != "" {
		return
	}
	v, _ := lookup(EnvToken)
	if v = strings.TrimSpace(v); v != "" {
		c.Server.AuthToken, c.Server.AuthTokenFrom = v, EnvToken
		c.EnvValues = append(c.EnvValues, v)
	}
}

// defaults is the configuration of an empty file: the defaults of the
// README's configuration reference.
func defaults() *Config {
	return &Config{
		Server: Server{Name: "codemode", Transport: "stdio", Addr: DefaultAddr, DescriptionBudget: DefaultDescriptionBudget,
			StartTimeout: 10 * time.Second},
		Store: Store{MaxExecutions: DefaultMaxExecutions, PausedTTL: DefaultPausedTTL, MaxRunLog: 64 << 20, Synchronous: "normal",
			Lease: 15 * time.Second},
		Sandbox: Sandbox{Timeout: 60 * time.Second, TaskTimeout: 30 * time.Minute, MemoryLimit: 256 << 20, MaxResultChars: 24000,
			Isolation: "process", TypeCheck: "off", MemoryLimiter: "system"},
		Approvals: Approvals{Elicitation: true, Tools: true, Console: true},
	}
}
