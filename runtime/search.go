package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/codemode-mcp/codemode-mcp/internal/search"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// maxSearchResults caps codemode.search results.
const maxSearchResults = 20

// maxSearchQuery bounds a codemode.search query, in bytes.
const maxSearchQuery = 1000

// maxSearchText is how much of a description (after its first line) the
// search index reads: the start says what a method does; the rest of a
// long description mentions many things in passing, and costs time.
const maxSearchText = 2000

// connectorWeight scales the score of a connector's own search document,
// so that a query naming what a method does finds the method before its
// connector ("write a note" is notes.createNote, not notes).
const connectorWeight = 0.5

// pathKind is the kind of a catalog item.
type pathKind string

const (
	kindConnector pathKind = "connector"
	kindMethod    pathKind = "method"
	kindSnippet   pathKind = "snippet"
	kindNamespace pathKind = "namespace"
)

// pathKinds lists every pathKind, for the TypeScript of the answers.
var pathKinds = []pathKind{kindConnector, kindMethod, kindSnippet, kindNamespace}

// The answers of codemode.search and codemode.describe. Their
// TypeScript, which the codemode global's declaration shows programs, is
// made from these types (codemodets.go): a doc tag is a field's JSDoc.

// searchAnswer is codemode.search's value.
type searchAnswer struct {
	Results []searchResult `json:"results"`
	Total   int            `json:"total"`
}

// searchResult is one hit of codemode.search.
type searchResult struct {
	Path             string   `json:"path" doc:"\"connector\", \"connector.method\" or \"snippets.name\"; pass it to describe."`
	Connector        string   `json:"connector,omitempty"`
	Method           string   `json:"method,omitempty"`
	Kind             pathKind `json:"kind"`
	Description      string   `json:"description"`
	RequiresApproval bool     `json:"requiresApproval,omitempty" doc:"The call pauses the program until a human approves it."`
	Score            float64  `json:"score"`
}

// description is codemode.describe's value.
type description struct {
	Path             string   `json:"path"`
	Kind             pathKind `json:"kind"`
	Description      string   `json:"description"`
	RequiresApproval bool     `json:"requiresApproval,omitempty"`
	// Types is a method's declaration with every type it refers to; a
	// connector's declarations when they are at most maxDescribeTypes
	// bytes (else empty: describe its methods one by one); a snippet's
	// run.
	Types string `json:"types" doc:"TypeScript that compiles on its own: a method's declaration with every type it uses; a connector's declarations when small (else \"\")."`
	// Groups and Methods let a model browse a connector (or a namespace
	// of connectors) when it does not know what to search for.
	Groups      []methodGroup   `json:"groups,omitempty" doc:"Groups of a connector's methods (tags, path prefixes), or a namespace's connectors."`
	Methods     []methodSummary `json:"methods,omitempty" doc:"Its methods, group by group."`
	InputSchema json.RawMessage `json:"inputSchema,omitempty" doc:"A snippet's input schema and program."`
	Code        string          `json:"code,omitempty"`
}

// methodSummary is one method in a connector's description.
type methodSummary struct {
	Method           string `json:"method"`
	Group            string `json:"group,omitempty"`
	Description      string `json:"description"`
	RequiresApproval bool   `json:"requiresApproval,omitempty"`
}

// methodGroup is one group of methods in a description.
type methodGroup struct {
	Name  string `json:"name"`
	Count int    `json:"count" doc:"How many of the methods are in the group."`
}

// maxGroupName bounds a group's name, which comes from a document.
const maxGroupName = 100

// group is what a method is listed under in its connector's description:
// its first tag (OpenAPI's grouping), else the first literal segment of
// its route's path ("GET /repos/{owner}/{repo}" is repos), else the
// namespace of its source name (before its first "/" or ".": fs/read_file
// is fs); "" when it has none.
func (t *tool) group() string {
	g := ""
	if len(t.def.Tags) > 0 {
		g = t.def.Tags[0]
	}
	if _, path, ok := strings.Cut(t.def.Route, " "); ok && g == "" {
		for seg := range strings.SplitSeq(path, "/") {
			if seg != "" && !strings.HasPrefix(seg, "{") {
				g = seg
				break
			}
		}
	}
	if i := strings.IndexAny(t.def.SourceName, "/."); i > 0 && g == "" {
		g = t.def.SourceName[:i]
	}
	return short.Clip(strings.TrimSpace(g), maxGroupName)
}

// grouped orders methods group by group, groups by name and methods in
// their source's order within a group, those in no group last, and
// returns the groups in that order.
func grouped(methods []methodSummary) []methodGroup {
	slices.SortStableFunc(methods, func(a, b methodSummary) int {
		switch {
		case a.Group == b.Group:
			return 0
		case a.Group == "":
			return 1
		case b.Group == "":
			return -1
		}
		return strings.Compare(a.Group, b.Group)
	})
	var groups []methodGroup
	for _, m := range methods {
		switch {
		case m.Group == "":
		case len(groups) > 0 && groups[len(groups)-1].Name == m.Group:
			groups[len(groups)-1].Count++
		default:
			groups = append(groups, methodGroup{Name: m.Group, Count: 1})
		}
	}
	return groups
}

// maxDescribeTypes bounds the declarations describe gives for a whole
// connector; a larger connector is described method by method.
const maxDescribeTypes = 16 << 10

// describeConnector is codemode.describe of a connector: its own
// description, its groups of methods, its methods group by group with
// their summaries, and its declarations when they are small.
func (s *source) describeConnector(path string) *description {
	d := &description{Path: path, Kind: kindConnector, Description: s.description}
	least := 0
	for _, t := range s.tools {
		d.Methods = append(d.Methods, t.summary(t.group()))
		least += len(t.def.Name) + 30 // "  NAME(input: T): Promise<T>;\n" at least
	}
	d.Groups = grouped(d.Methods)
	if least <= maxDescribeTypes {
		if decls := s.declarations(); len(decls) <= maxDescribeTypes {
			d.Types = decls
		}
	}
	return d
}

// summary is the method in a description, in group.
func (t *tool) summary(group string) methodSummary {
	return methodSummary{Method: t.def.Name, Group: group, Description: summary(t.typegen().Description), RequiresApproval: t.def.RequiresApproval}
}

// describeNamespace is codemode.describe of a namespace ("github" holding
// github.issues and github.pulls): its connectors as groups, and their
// methods.
func describeNamespace(path string, srcs []*source) *description {
	d := &description{Path: path, Kind: kindNamespace, Description: fmt.Sprintf("%d connectors", len(srcs))}
	for _, s := range srcs {
		if !s.available() {
			continue
		}
		n := len(d.Methods)
		for _, t := range s.tools {
			d.Methods = append(d.Methods, t.summary(s.name))
		}
		d.Groups = append(d.Groups, methodGroup{Name: s.name, Count: len(d.Methods) - n})
	}
	return d
}

// describeMethod is codemode.describe of a method: the declaration of its
// connector with this method alone, and every type it refers to.
func (t *tool) describeMethod(path string) *description {
	s := t.src
	m := t.typegen()
	decls := typegen.Declarations(typegen.Connector{Name: s.name, Definitions: s.typeDefs(), Methods: []typegen.Method{m}})
	return &description{Path: path, Kind: kindMethod, Description: m.Description, RequiresApproval: t.def.RequiresApproval, Types: decls}
}

// searchIndex is the index of a catalog: one segment per available
// connector, made once per source (see source.segment), so a catalog
// rebuilt for one connector's change re-analyses only that connector.
type searchIndex = search.Index[*searchResult]

// index returns the catalog's search index, made on first use.
func (c *catalog) index() *searchIndex {
	c.indexOnce.Do(func() {
		var ix *searchIndex
		for _, s := range c.sources {
			if s.available() {
				ix = ix.With(s.name, s.segment())
			}
		}
		c.idx = ix
	})
	return c.idx
}

// segment returns the source's documents for the search index: the
// connector itself and each method, analysed once.
func (s *source) segment() *search.Segment[*searchResult] {
	s.segOnce.Do(func() {
		desc := s.description
		if desc == "" {
			desc = fmt.Sprintf("%d methods", len(s.tools))
		}
		docs := make([]search.Doc[*searchResult], 0, len(s.tools)+1)
		var conn search.Doc[*searchResult]
		conn.Value = &searchResult{Path: s.name, Connector: s.name, Kind: kindConnector, Description: summary(desc)}
		conn.Fields[search.Name] = s.name
		conn.Fields[search.Summary] = s.description
		conn.Weight = connectorWeight
		docs = append(docs, conn)
		for _, t := range s.tools {
			docs = append(docs, t.searchDoc())
		}
		s.seg = search.NewSegment(docs)
	})
	return s.seg
}

// searchDoc is a method's search document.
func (t *tool) searchDoc() search.Doc[*searchResult] {
	def := t.def
	desc := def.Description
	if desc == "" {
		desc = def.Title
	}
	var d search.Doc[*searchResult]
	d.Value = &searchResult{
		Path: t.src.name + "." + def.Name, Connector: t.src.name, Method: def.Name, Kind: kindMethod,
		Description: summary(desc), RequiresApproval: def.RequiresApproval,
	}
	d.Fields[search.Name] = def.Name
	if !sameWords(def.Name, def.SourceName) {
		d.Fields[search.Name] += " " + def.SourceName
	}
	first, rest := splitFirstLine(def.Description)
	d.Fields[search.Summary] = strings.TrimSpace(def.Title + "\n" + first)
	d.Fields[search.Text] = short.Clip(rest, maxSearchText)
	d.Fields[search.Params] = strings.Join(propertyNames(def.InputSchema), " ")
	d.Fields[search.Tags] = strings.Join(def.Tags, " ")
	d.Fields[search.Route] = routeWords(def.Route)
	d.Fields[search.Container] = t.src.name
	d.Fields[search.Schema] = schemaText(def.InputSchema)
	if def.Deprecated {
		// A deprecated method gives way to its replacement, which usually
		// matches as well (teams_add_member_legacy and
		// teams_add_or_update_membership_for_user_in_org).
		d.Weight = deprecatedWeight
	}
	if ro := def.Annotations.ReadOnly; ro != nil {
		d.Effect = search.Writes
		if *ro {
			d.Effect = search.Reads
		}
	}
	return d
}

// schemaText is what a method's input says beyond its top-level names
// (those are Params): the names of nested properties, and every
// property's description and the string values its enum allows
// ("state_reason … reopened" lets "reopen an issue" find issues_update).
// It walks inline schemas only, at most maxSchemaDepth levels down, and
// stops at maxSearchText bytes.
func schemaText(schema json.RawMessage) string {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(v any, depth int, top bool)
	walk = func(v any, depth int, top bool) {
		m, ok := v.(map[string]any)
		if !ok || depth > maxSchemaDepth || b.Len() >= maxSearchText {
			return
		}
		if !top {
			if d, ok := m["description"].(string); ok {
				b.WriteString(short.Clip(d, 300))
				b.WriteByte('\n')
			}
			if e, ok := m["enum"].([]any); ok {
				for _, x := range e {
					if s, ok := x.(string); ok {
						b.WriteString(s)
						b.WriteByte(' ')
					}
				}
				b.WriteByte('\n')
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if !top {
					b.WriteString(n)
					b.WriteByte(' ')
				}
				walk(props[n], depth+1, false)
			}
		}
		if it, ok := m["items"]; ok {
			walk(it, depth+1, false)
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			if xs, ok := m[k].([]any); ok {
				for _, x := range xs {
					walk(x, depth+1, false)
				}
			}
		}
	}
	walk(root, 0, true)
	return short.Clip(b.String(), maxSearchText)
}

// deprecatedWeight scales a deprecated method's search score.
const deprecatedWeight = 0.7

// maxSchemaDepth bounds how deep schemaText walks.
const maxSchemaDepth = 4

// sameWords reports whether two names split into the same words
// (issues_create and issues/create).
func sameWords(a, b string) bool {
	return slices.Equal(search.Words(a), search.Words(b))
}

// splitFirstLine splits a description into its first non-empty line and
// the rest.
func splitFirstLine(s string) (first, rest string) {
	s = strings.TrimSpace(s)
	first, rest, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(first), strings.TrimSpace(rest)
}

// routeWords keeps the method and the literal segments of an HTTP route
// ("GET /repos/{owner}/{repo}/pulls" gives "GET repos pulls"): parameter
// names say little about what an operation does.
func routeWords(route string) string {
	var b strings.Builder
	for _, seg := range strings.FieldsFunc(route, func(r rune) bool { return r == '/' || r == ' ' }) {
		if strings.HasPrefix(seg, "{") {
			continue
		}
		b.WriteString(seg)
		b.WriteByte(' ')
	}
	return b.String()
}

// propertyNames returns the names of a schema's top-level properties.
func propertyNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names) // for determinism
	return names
}

// snippetSegment is the search segment of the saved snippets, kept while
// they do not change.
type snippetSegment struct {
	key string // the snippets' names and descriptions
	seg *search.Segment[*searchResult]
	// with is the last catalog index this segment was added to, and the
	// index that made: an index's statistics and meanings are made once,
	// not per query.
	with atomic.Pointer[[2]*searchIndex]
}

// withSnippets returns base with the snippets' segment, reusing the index
// made for the last query while neither has changed.
func (sn *snippetSegment) withSnippets(base *searchIndex) *searchIndex {
	if w := sn.with.Load(); w != nil && w[0] == base {
		return w[1]
	}
	ix := base.With(snippetsSegment, sn.seg)
	sn.with.Store(&[2]*searchIndex{base, ix})
	return ix
}

// snippetIndex returns a segment of the saved snippets (nil when there
// are none), reusing the last one made while the snippets are the same.
func (r *Runtime) snippetIndex(ctx context.Context) (*snippetSegment, error) {
	snips, err := r.store.ListSnippets(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	if len(snips) == 0 {
		return nil, nil
	}
	var key strings.Builder
	for _, sn := range snips {
		key.WriteString(sn.Name)
		key.WriteByte(0)
		key.WriteString(sn.Description)
		key.WriteByte(0)
	}
	if cur := r.snippetSeg.Load(); cur != nil && cur.key == key.String() {
		return cur, nil
	}
	docs := make([]search.Doc[*searchResult], 0, len(snips))
	for _, sn := range snips {
		var d search.Doc[*searchResult]
		d.Value = &searchResult{Path: "snippets." + sn.Name, Kind: kindSnippet, Description: summary(sn.Description)}
		d.Fields[search.Name] = sn.Name
		first, rest := splitFirstLine(sn.Description)
		d.Fields[search.Summary] = first
		d.Fields[search.Text] = rest
		d.Fields[search.Params] = strings.Join(propertyNames(sn.InputSchema), " ")
		d.Fields[search.Container] = "snippet"
		docs = append(docs, d)
	}
	sn := &snippetSegment{key: key.String(), seg: search.NewSegment(docs)}
	r.snippetSeg.Store(sn)
	return sn, nil
}

// snippetsSegment names the snippets' segment; connector names cannot
// contain a space.
const snippetsSegment = " snippets"

// Search answers codemode.search(query): connectors, methods and snippets
// ranked by the index (see package internal/search), best first, ties by
// path, at most maxSearchResults; total counts every match. An empty query
// lists everything.
func (r *Runtime) Search(ctx context.Context, query string) (json.RawMessage, error) {
	return marshalAnswer(r.search(ctx, query))
}

// search is Search's value.
func (r *Runtime) search(ctx context.Context, query string) (searchAnswer, error) {
	if len(query) > maxSearchQuery {
		// Every word of a query is looked up, and a word no document has
		// is compared with the whole vocabulary: a query is a few words.
		return searchAnswer{}, fmt.Errorf("codemode.search: the query is %d bytes long; at most %d (a few words name a method)", len(query), maxSearchQuery)
	}
	ix := r.catalog().index()
	sn, err := r.snippetIndex(ctx)
	if err != nil {
		return searchAnswer{}, err
	}
	if sn != nil {
		ix = sn.withSnippets(ix)
	}
	found := ix.Search(query, nil)
	total := len(found)
	// Scores are shown to two decimals, and ties are broken by path among
	// the scores as shown. Rounding keeps the order of different scores,
	// so only the shown results and those tied with the last of them are
	// sorted again.
	n := min(total, maxSearchResults)
	for n > 0 && n < total && round2(found[n].Score) == round2(found[n-1].Score) {
		n++
	}
	found = found[:n]
	for i := range found {
		found[i].Score = round2(found[i].Score)
	}
	slices.SortStableFunc(found, func(a, b search.Hit[*searchResult]) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Value.Path, b.Value.Path)
	})
	found = found[:min(n, maxSearchResults)]
	hits := make([]searchResult, len(found))
	for i, h := range found {
		hits[i] = *h.Value
		hits[i].Score = h.Score
	}
	return searchAnswer{hits, total}, nil
}

// round2 rounds a score to the two decimals results show.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// summary is the first line of a description, at most 200 bytes.
func summary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return short.Clip(s, 200)
}

// paths lists every available connector and method path, and the saved
// snippets'.
func (r *Runtime) paths(ctx context.Context) ([]string, error) {
	var out []string
	for _, s := range r.catalog().sources {
		if !s.available() {
			continue
		}
		out = append(out, s.name)
		for _, t := range s.tools {
			out = append(out, s.name+"."+t.def.Name)
		}
	}
	snips, err := r.store.ListSnippets(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	for _, sn := range snips {
		out = append(out, "snippets."+sn.Name)
	}
	return out, nil
}

// Describe answers codemode.describe(path) for a connector ("notes"), a
// method ("notes.createNote"), a namespace of connectors ("github" for
// github.issues) or a snippet ("snippets.name"): its kind, description,
// approval flag and TypeScript, and a connector's or a namespace's groups
// and methods. An unknown path is an error
// naming the nearest paths.
func (r *Runtime) Describe(ctx context.Context, path string) (json.RawMessage, error) {
	return marshalAnswer(r.describe(ctx, path))
}

// describe is Describe's value.
func (r *Runtime) describe(ctx context.Context, path string) (*description, error) {
	var d *description
	s, method, hasDot := r.catalog().splitPath(path)
	if s != nil && s.available() {
		switch t := s.byName[method]; {
		case !hasDot:
			d = s.describeConnector(path)
		case t != nil:
			d = t.describeMethod(path)
		}
	}
	if ns := r.catalog().inNamespace(path); d == nil && s == nil && len(ns) > 0 {
		d = describeNamespace(path, ns)
	}
	if name, ok := strings.CutPrefix(path, "snippets."); d == nil && ok {
		sn, err := r.store.GetSnippet(ctx, name)
		switch {
		case err == nil:
			input := "unknown"
			if len(sn.InputSchema) > 0 {
				input = typegen.Schema(sn.InputSchema)
			}
			name, _ := json.Marshal(sn.Name)
			d = &description{
				Path: path, Kind: kindSnippet, Description: sn.Description,
				Types:       fmt.Sprintf("declare function run(name: %s, input: %s): Promise<unknown>;\n", name, input),
				InputSchema: sn.InputSchema, Code: sn.Code,
			}
		case !isNotFound(err):
			return nil, fmt.Errorf("load snippet %s: %w", name, err)
		}
	}
	if d == nil {
		paths, err := r.paths(ctx)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("unknown path %q; nearest: %s", path, listOrNone(nearest(path, paths, 5)))
	}
	return d, nil
}

// marshalAnswer is a service's answer as JSON.
func marshalAnswer[T any](v T, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
