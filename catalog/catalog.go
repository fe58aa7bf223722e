package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/search"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// source is one configured connector as the runtime serves it. Its fields are
// fixed at New.
type source struct {
	src  Source
	name string
	// caps are what the connector said it can do when it was listed.
	caps connectors.Capabilities
	// description is the configured one-liner, else the connector's own
	// (Capabilities.Description), if any.
	description string
	// err is set when the connector's tools could not be listed; the
	// connector then has no global and no tools.
	err    error
	tools  []*tool
	byName map[string]*tool
	// listed are the tools as the connector listed them; fingerprint is
	// made of them on first use (see fingerprintOf), not at start-up:
	// canonicalising thousands of schemas takes tens of milliseconds.
	listed      []connectors.Tool
	fpOnce      sync.Once
	fingerprint string
	// defs are the connector's shared schemas (Capabilities.Definitions),
	// nil without; decoded on first use for declarations and for
	// validation.
	defs      json.RawMessage
	typesOnce sync.Once
	types     *typegen.Definitions
	valOnce   sync.Once
	valDefs   any // defs decoded for the validator
	declOnce  sync.Once
	decls     string // the source's declarations, made on first use
	segOnce   sync.Once
	seg       *search.Segment[*searchResult] // the source's search documents, made on first use
	// checkDefs are defs decoded for the check before running (see
	// precheck.go), on first use.
	checkDefsOnce sync.Once
	checkDefs     any
	// fwd holds the tools made for methods called without being listed
	// (Source.ForwardUnknown), by name.
	fwd sync.Map
	// approve and noApprove are the configuration's globs over names
	// (Source.Approve, Source.NoApprove); approvePaths and noApprovePaths
	// its globs over paths, connectors.PathPattern taken off.
	approve, noApprove           []string
	approvePaths, noApprovePaths []string
}

// tool is one method with its final approval verdict, its revert function
// and its lazily compiled input schema.
type tool struct {
	src *source
	def connectors.Tool
	// revertJS is the configured revert function's source, if any.
	revertJS string
	// approve and noApprove: the configuration's globs match the method.
	approve, noApprove bool

	schemaOnce sync.Once
	schema     *jsonschema.Schema // nil when the schema could not be compiled

	checkOnce sync.Once
	checkRoot any // the input schema decoded for the check before running

	// signIn, when set, makes this a stand-in for a method of a source
	// that needs a sign-in before it can list its tools (see
	// source.signInStandIn): its calls await the sign-in.
	signIn *connectors.SignInRequired
}

// catalog holds the sources in configuration order. It is not changed
// once built: RefreshConnector builds a new one.
type catalog struct {
	sources []*source
	byName  map[string]*source
	globals []sandbox.Global // one per available source

	declOnce sync.Once
	decls    string               // every source's declarations, made on first use
	diags    []typegen.Diagnostic // what decls do not express exactly

	indexOnce sync.Once
	idx       *searchIndex // made on first use from the sources' segments
}

// buildCatalog lists every source's tools and applies the configuration's
// approval globs and revert functions. A source whose Tools fails is kept
// with its error; bad configuration (duplicate names, malformed globs) is an
// error.
func buildCatalog(ctx context.Context, sources []Source, sc *scrub.Scrubber, log *slog.Logger) (*catalog, error) {
	c := &catalog{byName: map[string]*source{}}
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
		s, err := buildSource(ctx, src, name, sc, log)
		if err != nil {
			return nil, err
		}
		c.sources = append(c.sources, s)
		c.byName[name] = s
	}
	if err := c.checkNamespaces(); err != nil {
		return nil, err
	}
	c.globals = c.sandboxGlobals()
	return c, nil
}

// buildSource lists one connector's tools and applies the configuration's
// approval globs and revert functions. A connector whose Tools fails gives
// a source with that error. What the connector says of itself is scrubbed
// of secrets (sc).
func buildSource(ctx context.Context, src Source, name string, sc *scrub.Scrubber, log *slog.Logger) (*source, error) {
	s := &source{src: src, name: name, byName: map[string]*tool{}}
	s.approve, s.approvePaths = splitGlobs(src.Approve)
	s.noApprove, s.noApprovePaths = splitGlobs(src.NoApprove)
	defs, err := src.Connector.Tools(ctx)
	s.caps = src.Connector.Capabilities() // after Tools, so that they agree
	s.description = src.Description
	if s.description == "" {
		s.description = sc.String(s.caps.Description)
	}
	if err != nil {
		err = scrubError(sc, err)
		s.err = err
		if s.signIn() != nil {
			log.Info("connector needs a sign-in; a call to it pauses its run until then", "connector", name, "reason", err)
		} else {
			log.Warn("connector tools could not be listed; its global is absent", "connector", name, "err", err)
		}
		return s, nil
	}
	s.defs = sc.JSON(s.caps.Definitions)
	for _, def := range defs {
		def = scrubTool(sc, def)
		if len(def.InputSchema) == 0 {
			def.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		t := &tool{src: s, def: def}
		tmpl := routePath(def.Route)
		t.approve = matchesAny(s.approve, def.Name, def.SourceName) || tmpl != "" && matchesPath(s.approvePaths, tmpl) != ""
		t.noApprove = matchesAny(s.noApprove, def.Name, def.SourceName) || tmpl != "" && matchesPath(s.noApprovePaths, tmpl) != ""
		t.def.RequiresApproval = t.approve || def.RequiresApproval && !t.noApprove
		if js, ok := src.Revert[def.Name]; ok {
			t.revertJS = js
		} else if js, ok := src.Revert[def.SourceName]; ok {
			t.revertJS = js
		}
		s.tools = append(s.tools, t)
		s.byName[def.Name] = t
	}
	for m := range src.Revert {
		if s.lookupAny(m) == nil {
			log.Warn("revert configured for a method the connector does not have", "connector", name, "method", m)
		}
	}
	s.listed = defs
	return s, nil
}

// with returns a copy of the catalog in which s replaces the source of the
// same name.
func (c *catalog) with(s *source) *catalog {
	n := &catalog{sources: make([]*source, len(c.sources)), byName: make(map[string]*source, len(c.byName))}
	for i, old := range c.sources {
		if old.name == s.name {
			old = s
		}
		n.sources[i] = old
		n.byName[old.name] = old
	}
	n.globals = n.sandboxGlobals()
	return n
}

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

// lookupAny finds a tool by sandbox name or source name.
func (s *source) lookupAny(name string) *tool {
	if t := s.byName[name]; t != nil {
		return t
	}
	for _, t := range s.tools {
		if t.def.SourceName == name {
			return t
		}
	}
	return nil
}

// available reports whether the source has a global in the sandbox.
func (s *source) available() bool { return s.err == nil }

// signIn returns why the source needs a person to sign in before it can
// list its tools, or nil when it does not (it is available, or unavailable
// for another reason).
func (s *source) signIn() *connectors.SignInRequired {
	sir, _ := connectors.AsSignInRequired(s.err)
	return sir
}

// signInOrNil is signIn for a source that may be nil.
func (s *source) signInOrNil() *connectors.SignInRequired {
	if s == nil {
		return nil
	}
	return s.signIn()
}

// signInStandIn returns a stand-in for method name of a source that needs
// a sign-in: its tools are unknown until then, so any method name a
// program calls is taken, its arguments unchecked, and the call awaits
// the sign-in (see pass.decide). Once the person has signed in, the
// approval that resumes the run looks the method up among the tools the
// source lists then (Runtime.settleSignIns).
func (s *source) signInStandIn(name string, why *connectors.SignInRequired) *tool {
	return &tool{src: s, signIn: why, def: connectors.Tool{
		Name: name, SourceName: name, InputSchema: json.RawMessage(`{"type":"object"}`),
	}}
}

// fingerprint hashes what a replayed call depends on: every tool's names and
// schemas (not descriptions or titles), canonicalised, and the shared
// schemas they refer to.
func fingerprint(defs []connectors.Tool, shared json.RawMessage) (string, error) {
	type fp struct {
		Name         string          `json:"name"`
		SourceName   string          `json:"sourceName"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	list := make([]fp, 0, len(defs))
	for _, d := range defs {
		in, err := canonicalJSON(d.InputSchema)
		if err != nil {
			return "", fmt.Errorf("tool %s input schema: %w", d.Name, err)
		}
		var out json.RawMessage
		if len(d.OutputSchema) > 0 {
			if out, err = canonicalJSON(d.OutputSchema); err != nil {
				return "", fmt.Errorf("tool %s output schema: %w", d.Name, err)
			}
		}
		list = append(list, fp{Name: d.Name, SourceName: d.SourceName, InputSchema: in, OutputSchema: out})
	}
	b, err := json.Marshal(list)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(b)
	if len(shared) > 0 {
		// A connector's definitions are its own deterministic output: hashed
		// as they are, not canonicalised (they can be large).
		h.Write([]byte{0})
		h.Write(shared)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// approvalWhy is why a call needs approval (see tool.approval).
type approvalWhy int

const (
	noApproval      approvalWhy = iota
	whyConfig                   // the configuration's approve globs match the method
	whyConfigPath               // the configuration's approve globs match the path a generic call names
	whyReached                  // a generic call reaches a tool that needs approval
	whyConnectorArg             // the connector's verdict on a generic call that reaches none of its tools
	whyConnector                // the connector's verdict on the tool
)

// A verdict is whether, and why, a call must be approved.
type verdict struct {
	why approvalWhy
	// path is the path an approve glob matched (whyConfigPath).
	path string
	// reached is the tool a generic call reaches, and why a call of it
	// needs approval (whyReached).
	reached    *tool
	reachedWhy approvalWhy
}

// approval reports whether, and why, a call of the tool with args must be
// approved: the configuration's approve globs say yes; for a generic call
// (connectors.Router), the verdict of what it reaches (see routed); its
// no_approve globs no; else the connector's verdict on the tool. An error
// is the connector's refusal of a generic call (see connectors.Router),
// which comes first: a refused call is not put to anyone.
func (t *tool) approval(args json.RawMessage) (verdict, error) {
	if r := t.src.caps.Router; r != nil {
		route, generic, err := r.Route(t.def.SourceName, args)
		if err != nil {
			return verdict{}, err
		}
		if generic && !t.approve {
			return t.routed(route), nil
		}
	}
	switch {
	case t.approve:
		return verdict{why: whyConfig}, nil
	case t.noApprove:
		return verdict{}, nil
	case t.def.RequiresApproval:
		return verdict{why: whyConnector}, nil
	}
	return verdict{}, nil
}

// routed is the verdict on a generic call that reaches r: the
// configuration's approve globs over its paths; else, when it reaches
// some of the connector's tools, the strictest of their verdicts (their
// own globs decide, not the generic tool's no_approve: no_approve on
// request does not lift the approval of an operation it reaches); else
// the no_approve globs over the generic tool and over its paths, then the
// connector's verdict on the call.
func (t *tool) routed(r connectors.Route) verdict {
	if p := matchesPath(t.src.approvePaths, r.Paths...); p != "" {
		return verdict{why: whyConfigPath, path: p}
	}
	reached := 0
	for _, name := range r.Tools {
		x := t.src.bySourceName(name)
		if x == nil || x == t {
			continue
		}
		reached++
		if v, err := x.approval(nil); err == nil && v.why != noApproval {
			return verdict{why: whyReached, reached: x, reachedWhy: v.why}
		}
	}
	switch {
	case reached > 0, t.noApprove, matchesPath(t.src.noApprovePaths, r.Paths...) != "":
		return verdict{}
	case r.RequiresApproval:
		return verdict{why: whyConnectorArg}
	}
	return verdict{}
}

// bySourceName finds a listed tool by its source name.
func (s *source) bySourceName(name string) *tool {
	for _, t := range s.tools {
		if t.def.SourceName == name {
			return t
		}
	}
	return nil
}

// typeDefs returns the source's shared schemas for the declaration
// generator (nil without).
func (s *source) typeDefs() *typegen.Definitions {
	s.typesOnce.Do(func() {
		d, err := typegen.NewDefinitions(s.defs)
		if err != nil {
			return // typegen then treats the references as unknown
		}
		s.types = d
	})
	return s.types
}

// sandboxGlobals returns the sandbox globals: one per source, an
// unavailable one saying why (the sandbox installs no object for it).
func (c *catalog) sandboxGlobals() []sandbox.Global {
	var gs []sandbox.Global
	for _, s := range c.sources {
		if s.signIn() != nil {
			// Every method name is a call that awaits the sign-in.
			gs = append(gs, sandbox.Global{Name: s.name, Forward: true})
			continue
		}
		if !s.available() {
			gs = append(gs, sandbox.Global{Name: s.name, Unavailable: s.err.Error()})
			continue
		}
		g := sandbox.Global{Name: s.name, Forward: s.src.ForwardUnknown}
		for _, t := range s.tools {
			g.Methods = append(g.Methods, t.def.Name)
		}
		sort.Strings(g.Methods)
		gs = append(gs, g)
	}
	return gs
}

// resolve finds an available connector's method; the error is the message
// thrown into the program, naming the nearest alternatives.
func (c *catalog) resolve(connector, method string) (*tool, error) {
	s := c.byName[connector]
	if why := s.signInOrNil(); why != nil {
		if !forwardableName(method) {
			return nil, fmt.Errorf("%s.%s: not a method name", connector, short.Clip(method, 80))
		}
		return s.signInStandIn(method, why), nil
	}
	if s == nil || !s.available() {
		var names []string
		for _, s := range c.sources {
			if s.available() {
				names = append(names, s.name)
			}
		}
		if s != nil {
			return nil, fmt.Errorf("connector %s is unavailable: %v", connector, s.err)
		}
		return nil, fmt.Errorf("unknown connector %s; available: %s", connector, listOrNone(nearest(connector, names, len(names))))
	}
	t := s.byName[method]
	if t == nil && s.src.ForwardUnknown && forwardableName(method) {
		return s.forwarded(method), nil
	}
	if t == nil {
		names := make([]string, 0, len(s.tools))
		for _, t := range s.tools {
			names = append(names, t.def.Name)
		}
		return nil, fmt.Errorf("%s.%s is not a method of %s; nearest: %s", connector, method, connector, listOrNone(nearest(method, names, 5)))
	}
	return t, nil
}

// fingerprintOf returns the current fingerprint of a connector;
// ok is false when it is gone or unavailable.
func (c *catalog) fingerprintOf(name string) (string, bool) {
	s := c.byName[name]
	if s == nil || !s.available() {
		return "", false
	}
	return s.fingerprintValue(), true
}

// fingerprintValue returns the source's fingerprint, made on first use. A
// schema that is not JSON (which no connector lists) gives a fingerprint
// of the raw listing instead.
func (s *source) fingerprintValue() string {
	s.fpOnce.Do(func() {
		fp, err := fingerprint(s.listed, s.defs)
		if err != nil {
			b, _ := json.Marshal(s.listed)
			sum := sha256.Sum256(append(b, s.defs...))
			fp = "raw-" + hex.EncodeToString(sum[:])
		}
		s.fingerprint = fp
	})
	return s.fingerprint
}

// changed lists, for recorded fingerprints, the connectors that are gone or
// whose tools changed, sorted, each with the reason.
func (c *catalog) changed(recorded map[string]string) []string {
	var out []string
	for name, fp := range recorded {
		cur, ok := c.fingerprintOf(name)
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

// infos returns the connectors in source order with final approval flags.
func (c *catalog) infos() []codemode.ConnectorInfo {
	out := make([]codemode.ConnectorInfo, 0, len(c.sources))
	for _, s := range c.sources {
		out = append(out, s.info())
	}
	return out
}

// info describes the source with final approval flags.
func (s *source) info() codemode.ConnectorInfo {
	info := codemode.ConnectorInfo{Name: s.name, Description: s.description}
	if s.err != nil {
		info.Error, info.NeedsSignIn = s.err.Error(), s.signIn() != nil
	}
	for _, t := range s.tools {
		info.Tools = append(info.Tools, t.def)
	}
	return info
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// nearest returns up to n names ordered by edit distance to want (case
// insensitive; a name containing want, or contained in it, counts as half as
// far), ties by name.
func nearest(want string, names []string, n int) []string {
	out := textdist.Nearest(want, names, func(want, name string, d int) int {
		w, l := strings.ToLower(want), strings.ToLower(name)
		if strings.Contains(l, w) || strings.Contains(w, l) {
			return d / 2
		}
		return d
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// RefreshConnector lists the tools of connector name again, after it
// announced a change or came back from a restart with different tools, and
// reports whether what programs and clients see of it changed. Passes
// already running keep the catalog they began with; later ones, the tool
// description and search see the new tools. A paused execution that used
// the connector is refused on approval when its tools changed, as after a
// restart of codemode-mcp. When listing fails the catalog is unchanged.
func (r *Runtime) RefreshConnector(ctx context.Context, name string) (bool, error) {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	cat, old, s, err := r.relistLocked(ctx, name, "refresh", func(old *source) (Source, error) {
		if rf := old.caps.Refresher; rf != nil {
			return old.src, rf.Refresh(ctx)
		}
		return old.src, nil
	})
	if err != nil {
		return false, err
	}
	if reflect.DeepEqual(old.info(), s.info()) { // the fingerprint derives from the same tools
		return false, nil
	}
	r.cat.Store(cat.with(s))
	r.log.Info("connector tools refreshed", "connector", name, "tools", len(s.tools))
	return true, nil
}

// relistLocked lists the tools of connector name again, from the source
// prep makes of its current entry, and returns the catalog it looked in,
// the connector's entry there and the new entry; the catalog is not
// changed. op names the operation in errors. The caller holds refreshMu.
func (r *Runtime) relistLocked(ctx context.Context, name, op string, prep func(*source) (Source, error)) (*catalog, *source, *source, error) {
	cat := r.catalog()
	old := cat.byName[name]
	if old == nil {
		return nil, nil, nil, fmt.Errorf("runtime: %s: unknown connector %q", op, name)
	}
	src, err := prep(old)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("runtime: %s connector %s: %w", op, name, err)
	}
	s, err := buildSource(ctx, src, name, r.scrub, r.log)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("runtime: %s: %w", op, err)
	}
	if s.err != nil {
		return nil, nil, nil, fmt.Errorf("runtime: %s connector %s: %w", op, name, s.err)
	}
	return cat, old, s, nil
}

// maxForwardedName bounds the name of a method called without being
// listed.
const maxForwardedName = 128

// forwardableName reports whether a method name may be forwarded: not
// empty, at most maxForwardedName bytes, no control characters.
func forwardableName(name string) bool {
	if name == "" || len(name) > maxForwardedName {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// forwarded returns the tool of a method the connector did not list
// (Source.ForwardUnknown): any object as input, approval unless the
// configuration's no_approve globs match (approve globs win), the
// configured revert of that name if any.
func (s *source) forwarded(name string) *tool {
	if t, ok := s.fwd.Load(name); ok {
		return t.(*tool)
	}
	t := &tool{src: s, def: connectors.Tool{
		Name: name, SourceName: name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Description: "A method " + s.name + " did not list, forwarded by name (forward_unknown).",
	}}
	t.approve = matchesAny(s.approve, name)
	t.noApprove = matchesAny(s.noApprove, name)
	t.def.RequiresApproval = t.approve || !t.noApprove
	t.revertJS = s.src.Revert[name]
	got, _ := s.fwd.LoadOrStore(name, t)
	return got.(*tool)
}
