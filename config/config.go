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

// Defaults of the settings a file may leave out.
const (
	DefaultServerName     = "codemode"
	DefaultTransport      = "stdio"
	DefaultAddr           = "127.0.0.1:8931"
	DefaultMaxExecutions  = 50
	DefaultPausedTTL      = 24 * time.Hour
	DefaultMaxRunLog      = 64 << 20
	DefaultSynchronous    = "normal"
	DefaultLease          = 15 * time.Second
	MinLease              = time.Second
	DefaultSandboxTimeout = 60 * time.Second
	DefaultTaskTimeout    = 30 * time.Minute
	DefaultMemoryLimit    = 256 << 20
	DefaultMaxResultChars = 24000
	DefaultIsolation      = "process"
	// DefaultDescriptionBudget is server.description_budget's default.
	DefaultDescriptionBudget = 1500
	// DefaultStartTimeout is server.start_timeout's default.
	DefaultStartTimeout = 10 * time.Second
)

// Config is a loaded and validated configuration.
type Config struct {
	// Path is the file it was loaded from ("" for the built-in default).
	Path       string
	Server     Server
	Store      Store
	Sandbox    Sandbox
	Approvals  Approvals
	Telemetry  Telemetry
	Connectors []Connector // in file order
	// Log is the log section.
	Log Log
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
	Name      string // default "codemode"
	Transport string // "stdio" | "sse" | "http"; default "stdio"
	Addr      string // listen address for sse/http; default 127.0.0.1:8931
	// AuthToken, when non-empty, is the Bearer token required on sse/http
	// (and the console's login). server.auth_token sets it; when that is
	// unset or empty, the environment variable EnvToken does.
	AuthToken string
	// AuthTokenFrom says where AuthToken came from, for the log: the
	// field and file, or EnvToken; "" when there is no token.
	AuthTokenFrom string
	// Auth, when set (server.auth), makes the server an OAuth resource
	// server for the team's issuer instead: AuthToken is then "".
	Auth *ServerAuth
	// DescriptionBudget is how many tokens of TypeScript declarations the
	// codemode tool's description may carry inline; 0 never inlines them.
	// Default DefaultDescriptionBudget.
	DescriptionBudget int
	// StartTimeout is how long start-up (serve, run, check, console)
	// waits for each downstream MCP server to connect, initialise and
	// list its tools before it goes on without it; a connector's own
	// StartTimeout overrides it. Default DefaultStartTimeout.
	StartTimeout time.Duration

	// HTTP guards and bounds the sse and http transports.
	HTTP
}

// HTTP configures the HTTP transports. Zero fields take the server's
// defaults (server.DefaultMaxBody and the others).
type HTTP struct {
	// AllowedOrigins are browser origins ("https://app.example.com") that
	// may call the server besides loopback ones; they get CORS headers.
	AllowedOrigins []string
	// AllowedHosts are Host header values ("mcp.example.com" or
	// "mcp.example.com:8931") served besides loopback names and IP
	// literals.
	AllowedHosts []string
	// TLSCert and TLSKey are PEM files; with both, the server speaks HTTPS.
	TLSCert, TLSKey string
	// MaxBody caps a request body in bytes.
	MaxBody int64
	// ReadTimeout bounds reading a request's headers, and its body;
	// WriteTimeout is how long one write of a response may wait for the
	// client to read; IdleTimeout closes an idle kept-alive connection.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections caps open connections; more wait to be accepted.
	MaxConnections int
}

// Store configures the durable log.
type Store struct {
	// Path of the SQLite file; a relative path in a file is resolved against
	// the file's directory. "" (the default) means codemode.db in the
	// user's data directory (internal/appdirs). A postgres:// or
	// postgresql:// URL (IsPostgresURL) puts the log in that PostgreSQL
	// database instead, which several replicas may share.
	Path          string
	MaxExecutions int           // terminal runs kept; default 50
	PausedTTL     time.Duration // paused runs older than this expire; default 24h
	// MaxRunLog is the quota of one run's log in bytes: the arguments,
	// results and errors its calls and steps keep, over all its passes. A
	// run that would pass it ends in error. Default 64 MiB.
	MaxRunLog   int64
	Synchronous string // "normal" | "full"; default "normal"
	// CacheDir holds what can be made again but is worth keeping between
	// starts: fetched OpenAPI documents and the methods derived from them.
	// A relative path in a file is resolved against the file's directory.
	// "" means the user's cache directory (internal/appdirs).
	CacheDir string
	// Lease is how long a process's claim on the runs it works on lasts
	// without renewal: another process recovers them once it lapsed
	// (at once on the same machine when the process is dead). Default
	// 15s, at least 1s.
	Lease time.Duration
	// Postgres tunes the connection pool when Path is a PostgreSQL URL.
	Postgres Postgres
	// AuditRetention prunes audit records older than it
	// (store.audit_retention); 0, the default, keeps them all.
	AuditRetention time.Duration
}

// Postgres configures the PostgreSQL store's connection pool.
type Postgres struct {
	// MaxConns caps the pool's connections; 0 means the driver's default
	// (the larger of 4 and the number of CPUs).
	MaxConns int
}

// IsPostgresURL reports whether a store location (store.path, --db) is a
// PostgreSQL URL rather than a SQLite file path.
func IsPostgresURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Sandbox configures program execution.
type Sandbox struct {
	Timeout time.Duration // wall clock per pass; default 60s
	// TaskTimeout is the wall clock per pass of a run started as an MCP
	// task (its client polls it instead of waiting for the call);
	// default 30m.
	TaskTimeout time.Duration
	MemoryLimit int64 // bytes; default 256 MiB
	// MemoryLimiter is how a worker is held to MemoryLimit besides its
	// heap watchdog: "system" (the default: this system's own limit) or
	// "sampling" (the server samples each running worker's resident
	// size, as it does on macOS).
	MemoryLimiter  string
	MaxResultChars int    // what the model sees of a result; default 24000
	Isolation      string // "process" | "inprocess"; default "process"
	MaxCalls       int    // host calls per pass; 0 = sandbox default
	MaxStackDepth  int    // JS call stack depth; 0 = sandbox default
	// TypeCheck is "tsc" to type-check every new program with tsgo or
	// tsc (found on PATH) against the declarations before it runs, and
	// refuse it on type errors; "off" (the default) does not.
	TypeCheck string
}

// Approvals configures how approval requests reach the human.
type Approvals struct {
	// Elicitation asks the user through the client when it supports it.
	// Default true.
	Elicitation bool
	// Tools offers codemode_approve, codemode_reject and codemode_rollback
	// to MCP clients. Default true; false keeps approval away from the
	// model (elicitation and the command line remain).
	Tools bool
	// Console serves the approval console at / on the sse and http
	// transports. Default true.
	Console bool
	// Approvers decide the pending actions of every connector without
	// approvers of its own, under server.auth (approvals.approvers); the
	// zero value: everyone whose token has codemode:approve.
	Approvers policy.Approvers
	// Separation forbids approving a run one started, under server.auth
	// (approvals.separation). Default false.
	Separation bool
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
	Builtin string

	// Command, Args, Env and Cwd start a stdio MCP server. Its environment
	// is a minimal one (see Inherit) plus Env; Cwd is resolved against the
	// config file's directory.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// Inherit says which of the server's own environment variables a stdio
	// server gets besides the minimal set (inherit_env).
	Inherit Inherit

	// URL is a streamable-HTTP MCP endpoint, or a legacy SSE endpoint when
	// SSE is set (then Kind is KindSSE). Headers go with every request (also
	// for OpenAPI connectors).
	URL     string
	SSE     bool
	Headers map[string]string
	// OAuth configures how a url connector signs in to a server that
	// wants OAuth (the MCP authorization specification). Nil is the
	// default: discovery and registration do everything.
	OAuth *OAuth
	// Credentials is whose credentials a url connector's calls carry:
	// CredentialsShared ("" too: the one grant of whoever signed in) or
	// CredentialsPerUser (each person's own grant, under server.auth).
	Credentials string
	// TokenExchange, with Credentials per_user, trades each person's own
	// access token at the team's issuer for one of the server (RFC 8693)
	// instead of a sign-in of their own to it.
	TokenExchange *TokenExchange

	// OpenAPI is the document's path (resolved against the config file's
	// directory) or http(s) URL; BaseURL overrides its servers.
	OpenAPI    string
	BaseURL    string
	Auth       *Auth
	Operations Filter

	// Tools selects the MCP or builtin tools exposed (by source name).
	Tools Filter
	// Approve lists globs (path.Match syntax) of tool names that need
	// approval in addition to what the source declares.
	Approve []string
	// ForwardUnknown (MCP connectors) forwards a call of a method the
	// server did not list as a tools/call of that name, for servers whose
	// tools come and go; such calls need approval unless NoApprove
	// matches them, and Tools' globs still apply.
	ForwardUnknown bool
	// NoApprove lists globs of tool names that need no approval although
	// the source says they do (an OpenAPI POST that only searches, say).
	// Approve wins when both match.
	NoApprove []string
	// Approvers, when set (connectors.<name>.approvers), decide this
	// connector's pending actions in place of approvals.approvers.
	Approvers *policy.Approvers
	// Revert maps a tool name to a JavaScript expression
	// "(args, result) => …" run during a rollback. Never env-expanded, since
	// JavaScript template literals use ${…}.
	Revert map[string]string
	// Timeout bounds one call; 0 means none.
	Timeout time.Duration
	// StartTimeout (MCP servers) is how long start-up waits for this
	// server; 0 means Server.StartTimeout.
	StartTimeout time.Duration
	// Description is an optional human one-liner.
	Description string
}

// Auth is how an OpenAPI connector authenticates. Exactly one field is set.
type Auth struct {
	Bearer string
	Basic  *BasicAuth
	APIKey *APIKey
	OAuth2 *OAuth2
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
	TokenEndpoint, ClientID, ClientSecret string
	// Audience is the RFC 8693 audience asked for ("" for none: the
	// server's URL is always sent as resource); Scopes the scopes.
	Audience string
	Scopes   []string
}

// PerUser reports whether the connector's calls carry each person's own
// credentials (credentials: per_user).
func (c Connector) PerUser() bool { return c.Credentials == CredentialsPerUser }

// OAuth is a url connector's oauth: map. Every field is optional.
type OAuth struct {
	// ClientID and ClientSecret are a client registered beforehand with
	// the server's authorization server.
	ClientID, ClientSecret string
	// ClientMetadataURL is the HTTPS URL of a Client ID Metadata Document,
	// used as the client id by servers that accept one.
	ClientMetadataURL string
	// Scopes, when set, are asked for instead of those the server names.
	Scopes []string
	// Grant is "authorization_code" (a person signs in; the default) or
	// "client_credentials" (machine to machine: ClientID and ClientSecret
	// or PrivateKey).
	Grant string
	// PrivateKey is a PEM private key file (resolved against the config
	// file's directory): the client authenticates by private_key_jwt.
	PrivateKey string
}

// OAuth2 is the OAuth 2.0 client credentials grant: a token is requested
// from TokenURL with the client's id and secret.
type OAuth2 struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	Username, Password string
}

// APIKey is a key sent in a header, query parameter or cookie.
type APIKey struct {
	In    string // "header" | "query" | "cookie"
	Name  string
	Value string
}

// Inherit is a stdio connector's inherit_env: true (All), or a list of
// variable names. CODEMODE_* variables are never inherited.
type Inherit struct {
	All   bool
	Names []string
}

// Filter selects names with globs (path.Match syntax).
type Filter struct {
	Include, Exclude []string
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
// set and differ).
func (c *Config) tokenFromEnv(lookup func(string) (string, bool)) {
	if c.Server.AuthToken != "" {
		return
	}
	if v, ok := lookup(EnvToken); ok && strings.TrimSpace(v) != "" {
		c.Server.AuthToken, c.Server.AuthTokenFrom = v, EnvToken
		c.EnvValues = append(c.EnvValues, v)
	}
}

func defaults() *Config {
	return &Config{
		Server: Server{Name: DefaultServerName, Transport: DefaultTransport, Addr: DefaultAddr, DescriptionBudget: DefaultDescriptionBudget,
			StartTimeout: DefaultStartTimeout},
		Store: Store{
			MaxExecutions: DefaultMaxExecutions,
			PausedTTL:     DefaultPausedTTL,
			MaxRunLog:     DefaultMaxRunLog,
			Synchronous:   DefaultSynchronous,
			Lease:         DefaultLease,
		},
		Sandbox: Sandbox{
			Timeout:        DefaultSandboxTimeout,
			TaskTimeout:    DefaultTaskTimeout,
			MemoryLimit:    DefaultMemoryLimit,
			MaxResultChars: DefaultMaxResultChars,
			Isolation:      DefaultIsolation,
			TypeCheck:      "off",
			MemoryLimiter:  "system",
		},
		Approvals: Approvals{Elicitation: true, Tools: true, Console: true},
	}
}
