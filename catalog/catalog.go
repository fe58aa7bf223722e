// Package catalog holds every method of every configured connector, each
// compiled once: what the sandbox sees of them (its globals and their
// TypeScript declarations), how a program finds them (search and
// describe), and what a call of one must satisfy before it runs (its
// input schema, validated; the check before running; its approval
// verdict). A catalog is built from the connectors' listings and not
// changed after; the durable engine (package runtime) swaps in a new one
// when a connector's tools change. It imports no store, no sandbox
// executor and no MCP library.
package catalog

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/search"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// Source is one connector as configured: the connector plus the policy the
// configuration adds to it.
type Source struct {
	Connector connectors.Connector
	// Approve holds globs over method names (sandbox or source names) that
	// require approval in addition to the connector's own verdict; a glob
	// starting with connectors.PathPattern ("path:/admin/*") is over
	// paths instead: an HTTP operation's path template (Tool.Route), and
	// the paths a generic call names (connectors.Router).
	Approve []string
	// NoApprove holds globs over method names (or paths, as Approve) whose
	// calls need no approval although the connector's verdict says they do
	// (Approve wins when both match).
	NoApprove []string
	// Revert maps a method name (sandbox or source name) to the source of a
	// JavaScript function "(args, result) => …" run in the sandbox, with the
	// connectors, to undo an applied call during a rollback.
	Revert map[string]string
	// Description is the configured one-line description; when empty, the
	// connector's own (connectors.Capabilities.Description) is used.
	Description string
	// ForwardUnknown makes a method the connector did not list callable
	// anyway: the call goes to the connector under the name the program
	// used (its Call decides whether it exists), with an input of any
	// object. Such a call is validated, logged and replayed like any
	// other, and requires approval unless NoApprove matches its name.
	ForwardUnknown bool
}

// A Connector is one configured connector as the catalog serves it. Its
// exported fields are fixed when it is built and must not be changed; what
// is derived from them (its fingerprint, declarations, search documents,
// shared schemas) is made once, on first use, and never changes after.
type Connector struct {
	Source Source // as configured
	Name   string
	// Caps are what the connector said it can do when it was listed.
	Caps connectors.Capabilities
	// Description is the configured one-liner, else the connector's own
	// (Capabilities.Description), if any.
	Description string
	// Err is set when the connector's tools could not be listed; the
	// connector then has no global and no methods.
	Err error
	// Methods are the connector's methods in the order it listed them.
	Methods []*Method

	byName map[string]*Method
	// defs are the connector's shared schemas (Capabilities.Definitions),
	// scrubbed; nil without.
	defs json.RawMessage
	log  *slog.Logger
	// fwd holds the methods made for names called without being listed
	// (Source.ForwardUnknown), by name: fwdKept of them, maxForwardedKept
	// at most (give or take names first called at the same moment).
	fwd     sync.Map
	fwdKept atomic.Int32
	// approve and noApprove are the configuration's globs over names
	// (Source.Approve, Source.NoApprove); approvePaths and noApprovePaths
	// its globs over paths, connectors.PathPattern taken off.
	approve, noApprove           []string
	approvePaths, noApprovePaths []string

	// Made on first use, not at start-up: canonicalising, decoding,
	// analysing and generating for thousands of schemas takes tens of
	// milliseconds, and most runs need none of it.
	fingerprint func() string                         // see fingerprint
	decls       func() string                         // the connector's declarations
	segment     func() *search.Segment[*SearchResult] // its search documents
	// shared is the definitions decoded once (jsonref.Decode) for every
	// use: the validator, the check before running and the declarations
	// read the same value and change none of it. nil without definitions,
	// or when they do not decode.
	shared func() any
}

// A Method is one method of a connector with its final approval verdict,
// its revert function and its input schema compiled once, on first use.
// Its exported fields are fixed when it is made and must not be changed.
type Method struct {
	Conn *Connector
	Def  connectors.Tool
	// RevertJS is the configured revert function's source, if any.
	RevertJS string
	// SignIn, when set, makes this a stand-in for a method of a connector
	// that needs a sign-in before it can list its tools (see
	// Connector.signInStandIn): its calls await the sign-in.
	SignIn *connectors.SignInRequired

	// approve and noApprove: the configuration's globs match the method.
	approve, noApprove bool
	compiled           func() compiledInput
}

// compiledInput is a method's input schema decoded and compiled once, for
// the validation of every call and for the check before running.
type compiledInput struct {
	// root is the input schema decoded (jsonref.Decode), with the shared
	// schemas its references need added (jsonref.WithShared); nil when it
	// does not decode.
	root any
	// schema is nil when the schema does not compile: the method is then
	// called unvalidated (the connector decides).
	schema *jsonschema.Schema
}

// Options configure a catalog.
type Options struct {
	// Codemode is the TypeScript of the sandbox's own codemode global
	// (CodemodeDeclaration), which Declarations("") begins with.
	Codemode string
	// Scrubber holds the secrets removed from what connectors say of
	// themselves and their tools (nil: none).
	Scrubber *scrub.Scrubber
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// A Catalog holds the connectors in configuration order and every method
// of each. It is not changed once built (Build and With make new ones), so
// a pass keeps the catalog it began with; it is safe for concurrent use.
type Catalog struct {
	opts       Options
	connectors []*Connector
	byName     map[string]*Connector
	globals    []sandbox.Global // one per available connector

	// every connector's declarations and what they do not express
	// exactly, made on first use
	decls func() typegen.Result
	index func() *searchIndex // made on first use from the connectors' segments
}

// New lists every source's tools and applies the configuration's approval
// globs and revert functions. A source whose Tools fails is kept with its
// error; bad configuration (duplicate names, malformed globs) is an error.
func New(ctx context.Context, sources []Source, opts Options) (*Catalog, error) {
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	c := &Catalog{opts: opts, byName: map[string]*Connector{}}
	var names []string
	for i, src := range sources {
		if src.Connector == nil {
			return nil, fmt.Errorf("source %d has no connector", i)
		}
		name := src.Connector.Name()
		if err := connectors.ValidateConnectorName(name); err != nil {
			return nil, fmt.Errorf("source %d: %w", i, err)
		}
		if _, dup := c.byName[name]; dup {
			return nil, fmt.Errorf("two sources are named %q; connector names must be unique", name)
		}
		for _, l := range []struct {
			key   string
			globs []string
		}{{"approve", src.Approve}, {"no_approve", src.NoApprove}} {
			for _, g := range l.globs {
				if strings.HasPrefix(g, connectors.PathPattern) {
					continue // connectors.MatchPath: any text is a glob
				}
				if _, err := path.Match(g, ""); err != nil {
					return nil, fmt.Errorf("connector %s: %s glob %q: %w", name, l.key, g, err)
				}
			}
		}
		s := c.Build(ctx, src)
		c.connectors = append(c.connectors, s)
		c.byName[name] = s
		names = append(names, name)
	}
	if leaf, nested, ok := connectors.NamespaceConflict(names); ok {
		return nil, fmt.Errorf("connector %q cannot also be the namespace of connector %q; rename one", leaf, nested)
	}
	return c.finish(), nil
}

// finish makes what a catalog derives from its connectors: the sandbox's
// globals now, the declarations and the search index on first use.
func (c *Catalog) finish() *Catalog {
	c.globals = c.sandboxGlobals()
	c.decls = sync.OnceValue(c.declarations)
	c.index = sync.OnceValue(c.makeIndex)
	return c
}

// Build lists one connector's tools (src.Connector, whose name was checked
// when the catalog was made) and applies the configuration's approval
// globs and revert functions. A connector whose Tools fails gives a
// Connector with that error (Err). What the connector says of itself is
// scrubbed of secrets.
func (c *Catalog) Build(ctx context.Context, src Source) *Connector {
	sc, log := c.opts.Scrubber, c.opts.Logger
	name := src.Connector.Name()
	s := &Connector{Source: src, Name: name, byName: map[string]*Method{}, log: log}
	s.approve, s.approvePaths = splitGlobs(src.Approve)
	s.noApprove, s.noApprovePaths = splitGlobs(src.NoApprove)
	defs, err := src.Connector.Tools(ctx)
	s.Caps = src.Connector.Capabilities() // after Tools, so that they agree
	s.Description = cmp.Or(src.Description, sc.String(s.Caps.Description))
	s.fingerprint = sync.OnceValue(func() string { return fingerprint(defs, s.defs) })
	s.shared = sync.OnceValue(s.decodeShared)
	s.decls = sync.OnceValue(func() string { return typegen.Declarations(s.typegen()) })
	s.segment = sync.OnceValue(s.makeSegment)
	if err != nil {
		err = ScrubError(sc, err)
		s.Err = err
		if s.NeedsSignIn() != nil {
			log.Info("connector needs a sign-in; a call to it pauses its run until then", "connector", name, "reason", err)
		} else {
			log.Warn("connector tools could not be listed; its global is absent", "connector", name, "err", err)
		}
		return s
	}
	s.defs = sc.JSON(s.Caps.Definitions)
	for _, def := range defs {
		def = scrubTool(sc, def)
		if len(def.InputSchema) == 0 {
			def.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		t := s.newMethod(def)
		s.Methods = append(s.Methods, t)
		s.byName[def.Name] = t
	}
	for m := range src.Revert {
		if s.byName[m] == nil && s.bySourceName(m) == nil {
			log.Warn("revert configured for a method the connector does not have", "connector", name, "method", m)
		}
	}
	return s
}

// newMethod makes a method of s: the configuration's approval globs
// matched against its names and its route's path template, its final
// approval flag (the approve globs win, then no_approve, then the
// connector's verdict), its configured revert function (by sandbox name,
// else source name), and its input compiled on first use.
func (s *Connector) newMethod(def connectors.Tool) *Method {
	tmpl := routePath(def.Route)
	matches := func(names, paths []string) bool {
		return matchesAny(names, def.Name, def.SourceName) || tmpl != "" && matchesPath(paths, tmpl) != ""
	}
	t := &Method{Conn: s, Def: def, approve: matches(s.approve, s.approvePaths), noApprove: matches(s.noApprove, s.noApprovePaths)}
	t.Def.RequiresApproval = t.approve || def.RequiresApproval && !t.noApprove
	js, ok := s.Source.Revert[def.Name]
	if !ok {
		js = s.Source.Revert[def.SourceName]
	}
	t.RevertJS = js
	t.compiled = sync.OnceValue(t.compile)
	return t
}

// With returns a copy of the catalog in which s replaces the connector of
// the same name.
func (c *Catalog) With(s *Connector) *Catalog {
	n := &Catalog{opts: c.opts, connectors: make([]*Connector, len(c.connectors)), byName: make(map[string]*Connector, len(c.byName))}
	for i, old := range c.connectors {
		if old.Name == s.Name {
			old = s
		}
		n.connectors[i] = old
		n.byName[old.Name] = old
	}
	return n.finish()
}

// Connectors are the catalog's connectors in configuration order.
func (c *Catalog) Connectors() []*Connector { return c.connectors }

// Connector returns the connector of that name, nil when there is none.
func (c *Catalog) Connector(name string) *Connector { return c.byName[name] }

// Globals are the sandbox's globals: one per connector, an unavailable one
// saying why.
func (c *Catalog) Globals() []sandbox.Global { return c.globals }

// splitGlobs splits an approve or no_approve list into globs over names
// and globs over paths (connectors.PathPattern, which is taken off).
func splitGlobs(globs []string) (names, paths []string) {
	for _, g := range globs {
		if p, ok := strings.CutPrefix(g, connectors.PathPattern); ok {
			paths = append(paths, p)
		} else {
			names = append(names, g)
		}
	}
	return names, paths
}

// routePath is the path template of a Tool.Route ("GET /pets/{id}" ->
// "/pets/{id}"), "" without one.
func routePath(route string) string {
	_, p, _ := strings.Cut(route, " ")
	return p
}

// matchesPath returns the first of paths that a path glob matches, ""
// when none does.
func matchesPath(globs []string, paths ...string) string {
	for _, g := range globs {
		for _, p := range paths {
			if connectors.MatchPath(g, p) {
				return p
			}
		}
	}
	return ""
}

// matchesAny reports whether any glob matches one of the names. Globs were
// checked for syntax at build time.
func matchesAny(globs []string, names ...string) bool {
	for _, g := range globs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok {
				return true
			}
		}
	}
	return false
}

// Method returns the listed method of that (sandbox) name, nil when there
// is none.
func (s *Connector) Method(name string) *Method { return s.byName[name] }

// bySourceName finds a listed method by its source name.
func (s *Connector) bySourceName(name string) *Method {
	if i := slices.IndexFunc(s.Methods, func(t *Method) bool { return t.Def.SourceName == name }); i >= 0 {
		return s.Methods[i]
	}
	return nil
}

// Available reports whether the connector has a global in the sandbox.
func (s *Connector) Available() bool { return s.Err == nil }

// NeedsSignIn returns why the connector needs a person to sign in before
// it can list its tools, or nil when it does not (it is available, or
// unavailable for another reason, or s is nil).
func (s *Connector) NeedsSignIn() *connectors.SignInRequired {
	if s == nil {
		return nil
	}
	sir, _ := connectors.AsSignInRequired(s.Err)
	return sir
}

// signInStandIn returns a stand-in for method name of a connector that
// needs a sign-in: its tools are unknown until then, so any method name a
// program calls is taken, its arguments unchecked, and the call awaits
// the sign-in. Once the person has signed in, the approval that resumes
// the run looks the method up among the tools the connector lists then.
func (s *Connector) signInStandIn(name string, why *connectors.SignInRequired) *Method {
	t := s.newMethod(connectors.Tool{Name: name, SourceName: name, InputSchema: json.RawMessage(`{"type":"object"}`)})
	t.SignIn = why
	return t
}

// fingerprint hashes what a replayed call depends on: every tool's names and
// schemas (not descriptions or titles), canonicalised, and the shared
// schemas they refer to. A schema that is not JSON (which no connector
// lists) is hashed as the text it is.
func fingerprint(defs []connectors.Tool, shared json.RawMessage) string {
	canonical := func(raw json.RawMessage) json.RawMessage {
		c, _, err := jsonref.Canonical(raw)
		if err != nil {
			c, _ = json.Marshal(string(raw))
		}
		return c
	}
	type fp struct {
		Name         string          `json:"name"`
		SourceName   string          `json:"sourceName"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	list := make([]fp, len(defs))
	for i, d := range defs {
		list[i] = fp{Name: d.Name, SourceName: d.SourceName, InputSchema: canonical(d.InputSchema)}
		if len(d.OutputSchema) > 0 {
			list[i].OutputSchema = canonical(d.OutputSchema)
		}
	}
	b, _ := json.Marshal(list) // every schema in it is JSON
	h := sha256.New()
	h.Write(b)
	if len(shared) > 0 {
		// A connector's definitions are its own deterministic output: hashed
		// as they are, not canonicalised (they can be large).
		h.Write([]byte{0})
		h.Write(shared)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ApprovalWhy is why a call needs approval (see Method.Approval).
type ApprovalWhy int

const (
	NoApproval      ApprovalWhy = iota
	WhyConfig                   // the configuration's approve globs match the method
	WhyConfigPath               // the configuration's approve globs match the path a generic call names
	WhyReached                  // a generic call reaches a method that needs approval
	WhyConnectorArg             // the connector's verdict on a generic call that reaches none of its methods
	WhyConnector                // the connector's verdict on the method
)

// A Verdict is whether, and why, a call must be approved.
type Verdict struct {
	Why ApprovalWhy
	// Path is the path an approve glob matched (WhyConfigPath).
	Path string
	// Reached is the method a generic call reaches, and ReachedWhy why a
	// call of it needs approval (WhyReached).
	Reached    *Method
	ReachedWhy ApprovalWhy
}

// Approval reports whether, and why, a call of the method with args must
// be approved: the configuration's approve globs say yes; for a generic
// call (connectors.Router), the verdict of what it reaches (see routed);
// its no_approve globs no; else the connector's verdict on the method. An
// error is the connector's refusal of a generic call (see
// connectors.Router), which comes first: a refused call is not put to
// anyone.
func (t *Method) Approval(args json.RawMessage) (Verdict, error) {
	if r := t.Conn.Caps.Router; r != nil {
		route, generic, err := r.Route(t.Def.SourceName, args)
		if err != nil {
			return Verdict{}, err
		}
		if generic && !t.approve {
			return t.routed(route), nil
		}
	}
	switch {
	case t.approve:
		return Verdict{Why: WhyConfig}, nil
	case t.Def.RequiresApproval: // the connector's verdict, unless no_approve matched (newMethod)
		return Verdict{Why: WhyConnector}, nil
	}
	return Verdict{}, nil
}

// routed is the verdict on a generic call that reaches r: the
// configuration's approve globs over its paths; else, when it reaches
// some of the connector's methods, the strictest of their verdicts (their
// own globs decide, not the generic method's no_approve: no_approve on
// request does not lift the approval of an operation it reaches); else
// the no_approve globs over the generic method and over its paths, then
// the connector's verdict on the call.
func (t *Method) routed(r connectors.Route) Verdict {
	if p := matchesPath(t.Conn.approvePaths, r.Paths...); p != "" {
		return Verdict{Why: WhyConfigPath, Path: p}
	}
	reached := 0
	for _, name := range r.Tools {
		x := t.Conn.bySourceName(name)
		if x == nil || x == t {
			continue
		}
		reached++
		if v, err := x.Approval(nil); err == nil && v.Why != NoApproval {
			return Verdict{Why: WhyReached, Reached: x, ReachedWhy: v.Why}
		}
	}
	switch {
	case reached > 0, t.noApprove, matchesPath(t.Conn.noApprovePaths, r.Paths...) != "":
		return Verdict{}
	case r.RequiresApproval:
		return Verdict{Why: WhyConnectorArg}
	}
	return Verdict{}
}

// Tasker returns the connector that runs calls of t as tasks of its
// source, or nil when t is an ordinary call.
func (t *Method) Tasker() connectors.Tasker {
	if !t.Def.Task {
		return nil
	}
	return t.Conn.Caps.Tasker
}

// decodeShared decodes the connector's definitions, once for every use;
// without them, or when they do not decode, typegen treats the references
// into them as unknown.
func (s *Connector) decodeShared() any {
	v, _ := jsonref.Decode(s.defs) // nil when it does not decode
	return v
}

// sandboxGlobals returns the sandbox globals: one per connector, an
// unavailable one saying why (the sandbox installs no object for it).
func (c *Catalog) sandboxGlobals() []sandbox.Global {
	var gs []sandbox.Global
	for _, s := range c.connectors {
		g := sandbox.Global{Name: s.Name}
		switch {
		case s.NeedsSignIn() != nil:
			g.Forward = true // every method name is a call that awaits the sign-in
		case !s.Available():
			g.Unavailable = s.Err.Error()
		default:
			g.Forward = s.Source.ForwardUnknown
			g.Methods = slices.Sorted(maps.Keys(s.byName)) // names are unique (connectors.Connector.Tools)
		}
		gs = append(gs, g)
	}
	return gs
}

// Resolve finds an available connector's method; the error is the message
// thrown into the program, naming the nearest alternatives. A connector
// that needs a sign-in gives a stand-in (Method.SignIn) for any method
// name; one with Source.ForwardUnknown a method for a name it did not
// list.
func (c *Catalog) Resolve(connector, method string) (*Method, error) {
	s := c.byName[connector]
	if why := s.NeedsSignIn(); why != nil {
		if !forwardableName(method) {
			return nil, fmt.Errorf("%s.%s: not a method name", connector, short.Clip(method, 80))
		}
		return s.signInStandIn(method, why), nil
	}
	if s == nil || !s.Available() {
		var names []string
		for _, s := range c.connectors {
			if s.Available() {
				names = append(names, s.Name)
			}
		}
		if s != nil {
			return nil, fmt.Errorf("connector %s is unavailable: %v", connector, s.Err)
		}
		return nil, fmt.Errorf("unknown connector %s; available: %s", short.Clip(connector, 80), ListOrNone(Nearest(connector, names, len(names))))
	}
	t := s.byName[method]
	if t == nil && s.Source.ForwardUnknown && forwardableName(method) {
		return s.forwarded(method), nil
	}
	if t == nil {
		names := make([]string, 0, len(s.Methods))
		for _, t := range s.Methods {
			names = append(names, t.Def.Name)
		}
		return nil, fmt.Errorf("%s.%s is not a method of %s; nearest: %s", connector, short.Clip(method, 80), connector, ListOrNone(Nearest(method, names, 5)))
	}
	return t, nil
}

// Fingerprint returns the current fingerprint of a connector (a hash of
// its tools' names and schemas and of its shared schemas); ok is false
// when it is gone or unavailable.
func (c *Catalog) Fingerprint(name string) (string, bool) {
	s := c.byName[name]
	if s == nil || !s.Available() {
		return "", false
	}
	return s.fingerprint(), true
}

// Changed lists, for recorded fingerprints, the connectors that are gone
// or whose tools changed, sorted, each with the reason.
func (c *Catalog) Changed(recorded map[string]string) []string {
	var out []string
	for name, fp := range recorded {
		cur, ok := c.Fingerprint(name)
		switch {
		case !ok:
			out = append(out, name+" (gone)")
		case cur != fp:
			out = append(out, name+" (tools changed)")
		}
	}
	sort.Strings(out)
	return out
}

// Infos returns the connectors in configuration order with final
// approval flags.
func (c *Catalog) Infos() []codemode.ConnectorInfo {
	out := make([]codemode.ConnectorInfo, 0, len(c.connectors))
	for _, s := range c.connectors {
		out = append(out, s.Info())
	}
	return out
}

// Info describes the connector with final approval flags.
func (s *Connector) Info() codemode.ConnectorInfo {
	info := codemode.ConnectorInfo{Name: s.Name, Description: s.Description}
	if s.Err != nil {
		info.Error, info.NeedsSignIn = s.Err.Error(), s.NeedsSignIn() != nil
	}
	for _, t := range s.Methods {
		info.Tools = append(info.Tools, t.Def)
	}
	return info
}

// ListOrNone joins names with commas, "(none)" when there are none.
func ListOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// Nearest returns up to n names ordered by edit distance to want (case
// insensitive; a name containing want, or contained in it, counts as half as
// far), ties by name.
func Nearest(want string, names []string, n int) []string {
	out := textdist.Nearest(want, names, func(want, name string, d int) int {
		w, l := strings.ToLower(want), strings.ToLower(name)
		if strings.Contains(l, w) || strings.Contains(w, l) {
			return d / 2
		}
		return d
	})
	return out[:min(n, len(out))]
}

// maxForwardedName bounds the name of a method called without being
// listed.
const maxForwardedName = 128

// maxForwardedKept bounds how many of those methods a connector keeps for
// reuse (a program may call any number of distinct names).
const maxForwardedKept = 1024

// forwardableName reports whether a method name may be forwarded: not
// empty, at most maxForwardedName bytes, no control or format characters
// (the rule the MCP connector applies to the tool names it lists: a name
// a person approves holds no invisible character).
func forwardableName(name string) bool {
	return name != "" && len(name) <= maxForwardedName && !visible.HasControl(name)
}

// forwarded returns the method of a name the connector did not list
// (Source.ForwardUnknown): any object as input, approval unless the
// configuration's no_approve globs match (approve globs win), the
// configured revert of that name if any.
func (s *Connector) forwarded(name string) *Method {
	if t, ok := s.fwd.Load(name); ok {
		return t.(*Method)
	}
	t := s.newMethod(connectors.Tool{
		Name: name, SourceName: name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Description:      "A method " + s.Name + " did not list, forwarded by name (forward_unknown).",
		RequiresApproval: true,
	})
	if s.fwdKept.Load() >= maxForwardedKept {
		return t
	}
	got, loaded := s.fwd.LoadOrStore(name, t)
	if !loaded {
		s.fwdKept.Add(1)
	}
	return got.(*Method)
}

// ScrubError is sc.Error(err), except that a connectors.SignInRequired in
// err stays one (its reason scrubbed): the scrubbed error hides the chain
// it wraps, and the caller must still see that a sign-in is needed.
func ScrubError(sc *scrub.Scrubber, err error) error {
	if sir, ok := connectors.AsSignInRequired(err); ok {
		return &connectors.SignInRequired{Connector: sir.Connector, Reason: sc.String(sir.Reason)}
	}
	return sc.Error(err)
}

// scrubTool scrubs what a connector says of one tool.
func scrubTool(sc *scrub.Scrubber, t connectors.Tool) connectors.Tool {
	if sc.Empty() {
		return t
	}
	t.Title = sc.String(t.Title)
	t.Description = sc.String(t.Description)
	t.InputSchema = sc.JSON(t.InputSchema)
	t.OutputSchema = sc.JSON(t.OutputSchema)
	return t
}
