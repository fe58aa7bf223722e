package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path"
	"slices"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// Config describes one downstream MCP server. Exactly one of Command (a
// stdio server started as a child process) or URL (a remote server) is set.
type Config struct {
	// Name is the connector's global name in the sandbox.
	Name string

	// Command starts a stdio server with Args, in Dir (ours when empty).
	// Its environment is Env over a minimal one: our values of
	// MinimalEnv's variables and of those Inherit names (all of ours with
	// InheritAll), never a variable whose name starts with connectors.ReservedEnvPrefix.
	Command    string
	Args       []string
	Env        map[string]string
	Dir        string
	Inherit    []string
	InheritAll bool

	// URL is a streamable-HTTP endpoint, or with SSE set a legacy SSE
	// endpoint. Headers are sent with every request.
	URL     string
	SSE     bool
	Headers map[string]string
	// OAuth, for a url server, signs its requests in when the server wants
	// OAuth (see internal/oauth): the connector then signs in through it
	// (Capabilities.SignIner), and a server that needs a sign-in makes Tools
	// and Call fail with connectors.SignInRequired instead of being retried.
	// The connector owns it: Close closes it.
	OAuth *oauth.Session

	// Include and Exclude are path.Match globs over the tools' source
	// names: a tool is kept when Include is empty or one of its globs
	// matches, and none of Exclude's does.
	Include, Exclude []string

	// ForwardUnknown forwards a call of a tool the server did not list
	// (it may list it later) as a tools/call of that name, when Include
	// and Exclude allow the name.
	ForwardUnknown bool

	// CallTimeout bounds each tool call; 0 means no bound beyond the
	// caller's context.
	CallTimeout time.Duration

	// StartTimeout is how long Open waits for the first session:
	// connecting, the initialize handshake and listing the tools. Zero
	// means DefaultStartTimeout. See Open for what happens past it.
	StartTimeout time.Duration

	// RestartDelay is the wait before starting a new session after a
	// failure (a stdio server that exited, a remote server's transport
	// failure); it doubles with each consecutive failure up to
	// MaxRestartDelay, and a session that lasted twice MaxRestartDelay
	// resets it. Zero means backoff.DefaultFirst and backoff.DefaultMax.
	// A connector's restart_delay and max_restart_delay set them.
	RestartDelay, MaxRestartDelay time.Duration

	// OnToolsChanged, when set, is called after the server announces that
	// its tool list changed (notifications/tools/list_changed); call Refresh
	// to pick the change up. It runs on the transport's reading goroutine and
	// must not block.
	OnToolsChanged func()

	// OnRestart, when set, is called each time a new session starts after
	// the first (a stdio server started again, a remote server
	// reconnected), once it answered and listed its tools. It must not
	// block.
	OnRestart func()

	// Elicit, when set, answers the server's elicitation requests (form
	// mode), and the client declares the capability: given the request's
	// message and requested schema it returns "accept" with the content,
	// "decline" or "cancel". Nil declares no elicitation.
	Elicit func(ctx context.Context, message string, schema json.RawMessage) (action string, content map[string]any, err error)

	// Logger receives the connector's logs and, at debug level, the stderr
	// of a stdio server; nil means slog.Default().
	Logger *slog.Logger

	// Scrubber removes secrets from the stderr lines an error quotes and
	// from the progress messages the server sends; nil removes none.
	Scrubber *scrub.Scrubber

	// SignInHint and TokenHint tell the person, in the connector's
	// messages, how to sign in to the server ("" means "run: codemode-mcp
	// login NAME") and how to give it a credential of its own when it
	// refuses without a usable sign-in or refuses the configured one (""
	// means the connector's headers). check --url, which has no connector
	// name to log in with nor a config file, says its own flags.
	SignInHint, TokenHint string
}

// signInHint is what the connector's messages tell a person to do to sign
// in.
func (cfg *Config) signInHint() string {
	return cmp.Or(cfg.SignInHint, "run: codemode-mcp login "+cfg.Name)
}

// tokenHint is what the connector's messages tell a person to do to give
// the server a credential of its own.
func (cfg *Config) tokenHint() string {
	return cmp.Or(cfg.TokenHint, `if it wants a token of its own, set the connector's headers: {Authorization: "Bearer ${TOKEN}"}`)
}

// validate checks what the connector relies on: a valid name and exactly
// one source. The rest (keys that apply to one kind only, durations,
// globs) the config package checks where the user wrote them, with their
// position; a Config built otherwise (tests, benchmarks) is the
// programmer's.
func (cfg *Config) validate() error {
	if err := connectors.ValidateConnectorName(cfg.Name); err != nil {
		return err
	}
	switch {
	case cfg.Command == "" && cfg.URL == "":
		return errors.New("one of command or url is required")
	case cfg.Command != "" && cfg.URL != "":
		return errors.New("command and url are mutually exclusive")
	}
	return nil
}

// selected reports whether the tool named source passes Include and
// Exclude (a malformed pattern matches nothing).
func (cfg *Config) selected(source string) bool {
	match := func(glob string) bool {
		ok, _ := path.Match(glob, source)
		return ok
	}
	return (len(cfg.Include) == 0 || slices.ContainsFunc(cfg.Include, match)) && !slices.ContainsFunc(cfg.Exclude, match)
}
