package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/origin"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// Connector is an OpenAPI document's operations as one sandbox global.
// It is safe for concurrent use.
type Connector struct {
	// Fixed at New.
	name     string
	tools    []connectors.Tool
	ops      map[string]*Operation // by SourceName
	defs     json.RawMessage
	warnings []string
	scrub    *scrub.Scrubber
	calls    *caller // with the base URL; nil when there is none, for why
	why      string
	filter   *filter
	derived  *derivation // read only
	pinned   bool        // base_url is configured (see pinnedServer)

	storing    sync.WaitGroup // the derivation being written to the cache
	doc        *document      // read again by spec
	specMu     sync.Mutex
	specDoc    *specDocument // the document parsed, kept specKeep after a spec call
	specDrop   *time.Timer   // forgets specDoc
	routesOnce sync.Once
	routes     []route // every operation request can reach, made on the first Route
	byKey      map[routeKey][]int
}

// New reads the document (fetching it when it is a URL), derives its
// methods (or takes them from the cache) and returns the connector. A
// document that cannot be read or is not OpenAPI is an error; problems
// within it are warnings (Capabilities' Diagnostics).
func New(ctx context.Context, cfg Config) (*Connector, error) {
	f, snd, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Scrubber = cmp.Or(cfg.Scrubber, scrub.New())
	sc := cfg.Scrubber
	sc.Add(snd.secrets...) // scrubbed from loading errors too
	doc, err := readDocument(ctx, cfg.Document, cfg.CacheDir)
	if err != nil {
		return nil, sc.Error(err)
	}
	cache := derivedCache{dir: cfg.CacheDir}
	d, fresh, err := deriveCached(ctx, doc, cache, cfg.Logger)
	if err != nil {
		// Named as configured (a URL without what may carry a secret),
		// as reading it names it.
		return nil, sc.Error(fmt.Errorf("the OpenAPI document %s: %w", scrub.URL(cfg.Document), err))
	}
	if doc.read != nil {
		doc.raw = nil // spec reads it again: a connector lives as long as the server
	}
	c := &Connector{name: cfg.Name, scrub: sc, filter: f, derived: d, pinned: cfg.BaseURL != "", doc: doc}
	c.warnings = append(slices.Clone(doc.warnings), d.Warnings...)
	base, why := baseURL(cfg.BaseURL, d.Server, doc.url)
	if why == "" {
		cfg.BaseURL = base.String()
		if c.calls, err = newCaller(cfg, snd); err != nil {
			return nil, fmt.Errorf("connector %s: %w", cfg.Name, sc.Error(err))
		}
	}
	c.assemble(d, f)
	if fresh && cache.dir != "" {
		// The derivation is written while the server goes on starting
		// (d is only read from now on); Close waits for it.
		c.storing.Go(func() {
			if err := cache.store(doc.hash, d); err != nil {
				cfg.Logger.Warn("openapi: could not cache the derived methods", "err", err)
			}
		})
	}
	if why != "" {
		c.why = sc.String(why)
		c.warnings = append(c.warnings, c.why)
	}
	return c, nil
}

// checkConfig refuses what reading the document again cannot fix: a bad
// name, no document, a bad operation pattern, credentials or headers that
// cannot be sent (checkSending). It returns the operation filter and what
// every request sends.
func checkConfig(cfg Config) (*filter, *sending, error) {
	if err := connectors.ValidateConnectorName(cfg.Name); err != nil {
		return nil, nil, err
	}
	if cfg.Document == "" {
		return nil, nil, fmt.Errorf("connector %s: no OpenAPI document", cfg.Name)
	}
	snd, err := checkSending(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connector %s: %w", cfg.Name, err)
	}
	f, err := newFilter(cfg.Include, cfg.Exclude)
	return f, snd, err
}

// deriveCached returns the document's derivation from the cache, or
// derives it (fresh: the caller stores it), until ctx is done.
func deriveCached(ctx context.Context, doc *document, cache derivedCache, log *slog.Logger) (d *derivation, fresh bool, err error) {
	d, err = cache.load(doc.hash, doc.size)
	if err != nil {
		log.Debug("openapi: cached derivation unusable; deriving again", "err", err)
	}
	if d != nil {
		return d, false, nil
	}
	text, err := doc.jsonText(ctx)
	if err != nil {
		return nil, false, err
	}
	root, ok := parseJSON(text)
	if !ok {
		hint := " (converted from YAML)"
		if raw, _ := doc.bytes(); isJSONText(raw) {
			hint = ""
		}
		return nil, false, fmt.Errorf("not valid JSON%s%s", hint, syntaxErrorAt(text))
	}
	d, err = derive(ctx, &root, len(text))
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// syntaxErrorAt says where JSON text is invalid (": line L, column C:
// reason"), or "" (past its nesting depth, say).
func syntaxErrorAt(text []byte) string {
	var v json.RawMessage
	var se *json.SyntaxError
	if err := json.Unmarshal(text, &v); !errors.As(err, &se) {
		return ""
	}
	// Offset counts the bytes read, the bad one included.
	before := text[:max(0, min(int(se.Offset)-1, len(text)))]
	line, col := bytes.Count(before, []byte("\n"))+1, len(before)-bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf(": line %d, column %d: %v", line, col, se)
}

// assemble names the derived methods that pass the filter and builds the
// tools and the definitions they refer to. Of methods whose names
// collide, the first keeps the name and the others are skipped; so are
// methods named like the connector's own request and spec. With a
// configured base URL (pinned), every request stays on its origin: see
// pinnedServer.
func (c *Connector) assemble(d *derivation, f *filter) {
	c.ops = map[string]*Operation{}
	taken := map[string]string{methodRequest: "", methodSpec: ""}
	var refs []string
	// The operations skipped are warned of as the document's problems
	// are: maxWarnings of them, and a count of the rest.
	skipped := 0
	skip := func(format string, args ...any) {
		if skipped++; skipped <= maxWarnings {
			c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
		}
	}
	for i := range d.Methods {
		m := &d.Methods[i]
		name := methodName(&m.Op)
		if !f.keep(name, &m.Op) {
			continue
		}
		if first, dup := taken[name]; dup {
			if first == "" {
				skip("%s: method name %q is reserved for the connector's own method; operation skipped", m.Op.SourceName, name)
			} else {
				skip("%s: method name %q is already taken by %s; operation skipped", m.Op.SourceName, name, first)
			}
			continue
		}
		if _, dup := c.ops[m.Op.SourceName]; dup {
			skip("operationId %q is used twice; the second (%s %s) is skipped", m.Op.SourceName, m.Op.Method, m.Op.Path)
			continue
		}
		taken[name] = m.Op.SourceName
		op := m.Op // d is the cache's: not changed
		if c.pinned && c.calls != nil {
			op.Server = pinnedServer(c.calls.base, op.Server)
		}
		c.ops[op.SourceName] = &op
		t := m.Tool
		t.Name = name
		t.Tags = op.Tags
		t.Route = op.Method + " " + op.Path
		setHTTPHints(&t, op.Method)
		c.tools = append(c.tools, t)
		refs = append(refs, m.Refs...)
	}
	if skipped > maxWarnings {
		c.warnings = append(c.warnings, fmt.Sprintf("… and %d more operations skipped", skipped-maxWarnings))
	}
	c.tools = append(c.tools, requestTool(), specTool())
	c.defs = definitions(d, refs)
}

// definitions is the definitions document of the shared schemas named in
// names and those they refer to: {"components":{"schemas":{…}}}, names
// sorted.
func definitions(d *derivation, names []string) json.RawMessage {
	refs := reach(names, func(name string) []string { return d.DefRefs[name] })
	if len(refs) == 0 {
		return nil
	}
	o := obj{b: []byte(`{"components":{"schemas":`)}
	for _, n := range slices.Sorted(maps.Keys(refs)) {
		o.raw(n, d.Defs[n]) // derive converted every shared schema it reached
	}
	return append(o.done(), "}}"...)
}

// pinnedServer is the server an operation keeps when base_url pins the
// connector to an origin: a server that is a path ("/v2", "v2/") stays,
// resolved against the base URL; a server that names an origin (an
// absolute URL, or a network-path reference "//host/path", which is not
// absolute but resolves to another host), or anything that would not
// resolve to the base URL's scheme, host and port, is replaced by the base
// URL ("") so that the connector's credentials never leave its origin.
func pinnedServer(pin *url.URL, server string) string {
	if server == "" {
		return ""
	}
	ref, err := url.Parse(server)
	if err != nil || ref.Scheme != "" || ref.Host != "" || ref.User != nil || strings.HasPrefix(ref.Path, "//") {
		return ""
	}
	if !origin.Same(pin.ResolveReference(ref), pin) {
		return ""
	}
	return server
}

// baseURL resolves the URL requests go to: base_url when configured, else
// the document's server, a relative one against the document's URL. The
// warning says why there is none.
func baseURL(configured, server string, docURL *url.URL) (*url.URL, string) {
	if configured != "" {
		u, err := url.Parse(configured)
		if err != nil {
			return nil, fmt.Sprintf("base_url %q: %v", configured, err)
		}
		return u, ""
	}
	if server == "" && docURL == nil {
		return nil, "the document names no server: set base_url to call its methods"
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Sprintf("the document's server URL %q: %v; set base_url", server, err)
	}
	if !u.IsAbs() && docURL == nil {
		return nil, fmt.Sprintf("the document's server URL %q is relative and the document is a file: set base_url to call its methods", server)
	}
	if !u.IsAbs() {
		u = docURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Sprintf("the document's server URL %q is not an http(s) URL: set base_url to call its methods", server)
	}
	return u, ""
}

// Name returns the connector's global name.
func (c *Connector) Name() string { return c.name }

// Capabilities: its description is the document's title, its Definitions
// the shared schemas the tools' schemas refer to
// (#/components/schemas/NAME, as {"components":{"schemas":{…}}}; nil
// when they refer to none), its Diagnostics the document's problems that
// did not stop it (unresolvable references, skipped operations and why,
// a cached copy used offline); request routes (route.go).
func (c *Connector) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{
		Description: c.derived.Title,
		Definitions: c.defs,
		Diagnostics: slices.Clone(c.warnings),
		Router:      c,
	}
}

// Tools lists one method per operation kept, then request and spec.
func (c *Connector) Tools(context.Context) ([]connectors.Tool, error) {
	return slices.Clone(c.tools), nil
}

// Call makes the request of a method. A non-2xx answer is the Result's
// error, with the status and the decoded body as its Value.
func (c *Connector) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	op := c.ops[tool]
	switch {
	case tool == methodSpec:
		return c.spec(ctx, args)
	case tool == methodRequest:
		tg, _, err := c.routeRequest(args)
		if err != nil {
			return connectors.Result{IsError: true, Message: c.scrub.String("request: " + err.Error())}, nil
		}
		if tg != nil {
			return c.calls.request(ctx, tg)
		}
	case op == nil:
		return connectors.Result{}, fmt.Errorf("%w: %s", connectors.ErrUnknownTool, tool)
	}
	if c.calls == nil {
		return connectors.Result{IsError: true, Message: c.why}, nil
	}
	return c.calls.call(ctx, op, args)
}

// Close stops a token request under way, closes idle connections,
// forgets the document spec parsed and waits for the derivation to be
// written to the cache. Calls must have returned. It is safe to call more
// than once.
func (c *Connector) Close() error {
	if c.calls != nil {
		c.calls.close()
	}
	c.forgetSpec()
	c.storing.Wait()
	return nil
}

// specWholeLimit is the largest document, or part of one, spec returns
// (what the execution log keeps of one value by default).
const specWholeLimit = 1 << 20

// specKeep is how long spec keeps the document parsed after a call: a
// program asking for many parts parses it once (GitHub's took 50–100 ms
// and a hundred megabytes a call), and a server whose programs stopped
// asking does not hold it (GitHub's is about 35 MB parsed).
const specKeep = 2 * time.Minute

// specDocument returns the document parsed, parsing it when it is not
// kept, and keeps it specKeep longer.
func (c *Connector) specDocument(ctx context.Context) (*specDocument, error) {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	if c.specDoc == nil {
		d, err := c.doc.parsed(ctx)
		if err != nil {
			return nil, err
		}
		c.specDoc = &d
	}
	if c.specDrop == nil {
		c.specDrop = time.AfterFunc(specKeep, c.forgetSpec)
	}
	c.specDrop.Reset(specKeep)
	return c.specDoc, nil
}

// forgetSpec forgets the document spec parsed.
func (c *Connector) forgetSpec() {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	if c.specDrop != nil {
		c.specDrop.Stop()
	}
	c.specDoc = nil
}

// spec returns the document as JSON, or with {pointer} the part of it a
// JSON pointer names.
func (c *Connector) spec(ctx context.Context, args json.RawMessage) (connectors.Result, error) {
	var a struct {
		Pointer string `json:"pointer"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return connectors.Result{IsError: true, Message: "spec: " + err.Error()}, nil
		}
	}
	doc, err := c.specDocument(ctx)
	if err != nil {
		return connectors.Result{}, err
	}
	ptr := strings.TrimPrefix(a.Pointer, "#")
	if ptr == "" && doc.size > specWholeLimit {
		return connectors.Result{IsError: true, Message: fmt.Sprintf(
			"spec: the document is %d KiB, too large to return whole; ask for a part with a JSON pointer, "+
				`such as spec({pointer: "/components/schemas"}) or spec({pointer: "/paths/~1some~1path/get"})`, doc.size>>10)}, nil
	}
	n := resolvePointer(&doc.root, ptr)
	if n == nil {
		return connectors.Result{IsError: true, Message: fmt.Sprintf("spec: nothing at %q in the document", a.Pointer)}, nil
	}
	part, ok := n.appendJSONWithin(nil, specWholeLimit)
	if !ok {
		return connectors.Result{IsError: true, Message: fmt.Sprintf(
			"spec: the part at %q is larger than %d KiB, too large to return; ask for a smaller part, one of its members or items", a.Pointer, specWholeLimit>>10)}, nil
	}
	return connectors.Result{Value: c.scrub.JSON(part)}, nil
}

// requestTool is the generic request method.
func requestTool() connectors.Tool {
	t := connectors.Tool{
		Name:       methodRequest,
		SourceName: methodRequest,
		Description: "Make any HTTP request to this API, with the connector's base URL and credentials, and get {status, headers, body} whatever the status " +
			"(it throws only when no answer came). path is relative to the base URL, or an absolute URL under it, such as a Link header's next page. " +
			"A request that reaches one of the API's operations follows that operation's rules (its approval; refused if the configuration excluded it); " +
			"any other requires approval unless the method is GET, HEAD, OPTIONS or TRACE.",
		InputSchema:  json.RawMessage(requestInput),
		OutputSchema: json.RawMessage(requestOutput),
	}
	setHTTPHints(&t, "POST")
	return t
}

const requestInput = `{"type":"object","properties":{` +
	`"method":{"type":"string","enum":["GET","HEAD","POST","PUT","PATCH","DELETE","OPTIONS","TRACE","get","head","post","put","patch","delete","options","trace"]},` +
	`"path":{"type":"string","minLength":1,"description":"Path relative to the base URL (\"/repos/o/r/issues\"), or an absolute URL under it."},` +
	`"query":{"type":"object","description":"Query parameters; an array value repeats the key.","additionalProperties":{"anyOf":[{"type":["string","number","boolean"]},{"type":"array","items":{"type":["string","number","boolean"]}}]}},` +
	`"headers":{"type":"object","additionalProperties":{"type":"string"}},` +
	`"body":{"description":"Sent as JSON, unless a Content-Type header says otherwise (then a string is sent as it is)."}` +
	`},"required":["method","path"],"additionalProperties":false}`

const requestOutput = `{"type":"object","properties":{` +
	`"status":{"type":"integer"},` +
	`"headers":{"type":"object","description":"Lower-case names; repeated headers joined with \", \".","additionalProperties":{"type":"string"}},` +
	`"body":{"description":"JSON decoded; text as a string; other content as {mediaType, base64}; null when empty."}` +
	`},"required":["status","headers","body"]}`

// specTool is the method returning the document.
func specTool() connectors.Tool {
	t := connectors.Tool{
		Name:         methodSpec,
		SourceName:   methodSpec,
		Description:  "The OpenAPI document this connector was built from, as JSON; with pointer (a JSON pointer such as \"/components/schemas/user\") only that part of it.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"pointer":{"type":"string"}},"additionalProperties":false}`),
		OutputSchema: nil,
	}
	setHTTPHints(&t, "GET")
	return t
}
