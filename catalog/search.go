package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/search"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// maxSearchResults caps codemode.search results.
const maxSearchResults = 20

// maxSearchQuery bounds a codemode.search query, in bytes.
const maxSearchQuery = 1000

// maxSearchText is how much of a description's first line (with the
// title) and how much of the rest the search index reads: the start says
// what a method does; the rest of a long description mentions many
// things in passing, and costs time, as a downstream's megabyte line would.
const maxSearchText = 2000

// connectorWeight scales the score of a connector's own search document,
// so that a query naming what a method does finds the method before its
// connector ("write a note" is notes.createNote, not notes).
const connectorWeight = 0.5

// PathKind is the kind of a catalog item.
type PathKind string

const (
	kindConnector PathKind = "connector"
	kindMethod    PathKind = "method"
	kindSnippet   PathKind = "snippet"
	kindNamespace PathKind = "namespace"
)

// pathKinds lists every PathKind, for the TypeScript of the answers.
var pathKinds = []PathKind{kindConnector, kindMethod, kindSnippet, kindNamespace}

// The answers of codemode.search and codemode.describe. Their
// TypeScript, which the codemode global's declaration shows programs, is
// made from these types (CodemodeDeclaration): a doc tag is a field's
// JSDoc, and says what the field is once for both. Groups and Methods let
// a model browse a connector (or a namespace of connectors) when it does
// not know what to search for.

// SearchAnswer is codemode.search's value.
type SearchAnswer struct {
	Results []SearchResult `json:"results"`
	Total   int            `json:"total"`
}

// SearchResult is one hit of codemode.search.
type SearchResult struct {
	Path             string   `json:"path" doc:"\"connector\", \"connector.method\" or \"snippets.name\"; pass it to describe."`
	Connector        string   `json:"connector,omitempty"`
	Method           string   `json:"method,omitempty"`
	Kind             PathKind `json:"kind"`
	Description      string   `json:"description"`
	RequiresApproval bool     `json:"requiresApproval,omitempty" doc:"The call pauses the program until a human approves it."`
	Score            float64  `json:"score"`
}

// Description is codemode.describe's value.
type Description struct {
	Path             string          `json:"path"`
	Kind             PathKind        `json:"kind"`
	Description      string          `json:"description"`
	RequiresApproval bool            `json:"requiresApproval,omitempty"`
	Types            string          `json:"types" doc:"TypeScript that compiles on its own: a method's declaration with every type it uses; a connector's declarations when small (else \"\")."`
	Groups           []MethodGroup   `json:"groups,omitempty" doc:"Groups of a connector's methods (tags, path prefixes), or a namespace's connectors."`
	Methods          []MethodSummary `json:"methods,omitempty" doc:"Its methods, group by group."`
	InputSchema      json.RawMessage `json:"inputSchema,omitempty" doc:"A snippet's input schema and program."`
	Code             string          `json:"code,omitempty"`
}

// MethodSummary is one method in a connector's description.
type MethodSummary struct {
	Method           string `json:"method"`
	Group            string `json:"group,omitempty"`
	Description      string `json:"description"`
	RequiresApproval bool   `json:"requiresApproval,omitempty"`
}

// MethodGroup is one group of methods in a description.
type MethodGroup struct {
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
func (t *Method) group() string {
	g := ""
	if len(t.Def.Tags) > 0 {
		g = t.Def.Tags[0]
	}
	if g == "" {
		for seg := range strings.SplitSeq(routePath(t.Def.Route), "/") {
			if seg != "" && !strings.HasPrefix(seg, "{") {
				g = seg
				break
			}
		}
	}
	if i := strings.IndexAny(t.Def.SourceName, "/."); i > 0 && g == "" {
		g = t.Def.SourceName[:i]
	}
	return short.Clip(strings.TrimSpace(g), maxGroupName)
}

// grouped orders methods group by group, groups by name and methods in
// their source's order within a group, those in no group last, and
// returns the groups in that order.
func grouped(methods []MethodSummary) []MethodGroup {
	slices.SortStableFunc(methods, func(a, b MethodSummary) int {
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
	var groups []MethodGroup
	for _, m := range methods {
		switch {
		case m.Group == "":
		case len(groups) > 0 && groups[len(groups)-1].Name == m.Group:
			groups[len(groups)-1].Count++
		default:
			groups = append(groups, MethodGroup{Name: m.Group, Count: 1})
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
func (s *Connector) describeConnector(path string) *Description {
	d := &Description{Path: path, Kind: kindConnector, Description: s.Description}
	for _, t := range s.Methods {
		d.Methods = append(d.Methods, t.summary(t.group()))
	}
	d.Groups = grouped(d.Methods)
	if s.leastDeclarations() <= maxDescribeTypes {
		if decls := s.decls(); len(decls) <= maxDescribeTypes {
			d.Types = decls
		}
	}
	return d
}

// summary is the method in a description, in group.
func (t *Method) summary(group string) MethodSummary {
	return MethodSummary{Method: t.Def.Name, Group: group, Description: summary(t.description()), RequiresApproval: t.Def.RequiresApproval}
}

// describeNamespace is codemode.describe of a namespace ("github" holding
// github.issues and github.pulls): its connectors as groups, and their
// methods.
func describeNamespace(path string, srcs []*Connector) *Description {
	d := &Description{Path: path, Kind: kindNamespace, Description: fmt.Sprintf("%d connectors", len(srcs))}
	for _, s := range srcs {
		if !s.Available() {
			continue
		}
		n := len(d.Methods)
		for _, t := range s.Methods {
			d.Methods = append(d.Methods, t.summary(s.Name))
		}
		d.Groups = append(d.Groups, MethodGroup{Name: s.Name, Count: len(d.Methods) - n})
	}
	return d
}

// describeMethod is codemode.describe of a method: the declaration of its
// connector with this method alone, and every type it refers to.
func (t *Method) describeMethod(path string) *Description {
	s := t.Conn
	decls := typegen.Declarations(typegen.Connector{Name: s.Name, Definitions: s.shared(), Methods: []connectors.Tool{t.Def}})
	return &Description{Path: path, Kind: kindMethod, Description: t.description(), RequiresApproval: t.Def.RequiresApproval, Types: decls}
}

// searchIndex is the index of a catalog: one segment per available
// connector, made once per connector (see Connector.makeSegment), so a
// catalog rebuilt for one connector's change re-analyses only that
// connector.
type searchIndex = search.Index[*SearchResult]

// makeIndex makes the catalog's search index.
func (c *Catalog) makeIndex() *searchIndex {
	var ix *searchIndex
	for _, s := range c.connectors {
		if s.Available() {
			ix = ix.With(s.Name, s.segment())
		}
	}
	return ix
}

// makeSegment makes the connector's documents for the search index: the
// connector itself and each method, analysed once.
func (s *Connector) makeSegment() *search.Segment[*SearchResult] {
	desc := cmp.Or(s.Description, fmt.Sprintf("%d methods", len(s.Methods)))
	docs := make([]search.Doc[*SearchResult], 0, len(s.Methods)+1)
	var conn search.Doc[*SearchResult]
	conn.Value = &SearchResult{Path: s.Name, Connector: s.Name, Kind: kindConnector, Description: summary(desc)}
	conn.Fields[search.Name] = s.Name
	conn.Fields[search.Summary] = s.Description
	conn.Weight = connectorWeight
	docs = append(docs, conn)
	for _, t := range s.Methods {
		docs = append(docs, t.searchDoc())
	}
	return search.NewSegment(docs)
}

// searchDoc is a method's search document.
func (t *Method) searchDoc() search.Doc[*SearchResult] {
	def := t.Def
	var d search.Doc[*SearchResult]
	d.Value = &SearchResult{
		Path: t.Conn.Name + "." + def.Name, Connector: t.Conn.Name, Method: def.Name, Kind: kindMethod,
		Description: summary(t.description()), RequiresApproval: def.RequiresApproval,
	}
	d.Fields[search.Name] = def.Name
	if !slices.Equal(search.Words(def.Name), search.Words(def.SourceName)) { // not issues_create and issues/create
		d.Fields[search.Name] += " " + def.SourceName
	}
	first, rest := splitFirstLine(def.Description)
	d.Fields[search.Summary] = short.Clip(strings.TrimSpace(def.Title+"\n"+first), maxSearchText)
	d.Fields[search.Text] = short.Clip(rest, maxSearchText)
	d.Fields[search.Params], d.Fields[search.Schema] = schemaText(def.InputSchema)
	d.Fields[search.Tags] = strings.Join(def.Tags, " ")
	d.Fields[search.Route] = routeWords(def.Route)
	d.Fields[search.Container] = t.Conn.Name
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

// schemaText returns the names of an input schema's top-level properties,
// sorted (the Params field), and what it says beyond them (the Schema
// field): the names of nested properties, and every property's
// description and the string values its enum allows ("state_reason …
// reopened" lets "reopen an issue" find issues_update). It walks inline
// schemas only, at most maxSchemaDepth levels down, and stops at
// maxSearchText bytes.
func schemaText(schema json.RawMessage) (params, text string) {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return "", ""
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
			names := slices.Sorted(maps.Keys(props))
			if top {
				params = strings.Join(names, " ")
			}
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
	return params, short.Clip(b.String(), maxSearchText)
}

// deprecatedWeight scales a deprecated method's search score.
const deprecatedWeight = 0.7

// maxSchemaDepth bounds how deep schemaText walks.
const maxSchemaDepth = 4

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

// SnippetStore is what search and describe read of the saved snippets
// (codemode.Store has it).
type SnippetStore interface {
	ListSnippets(ctx context.Context) ([]codemode.Snippet, error)
	// SnippetStamps lists the snippets by name with only their Name and
	// CreatedAt (when each was last saved).
	SnippetStamps(ctx context.Context) ([]codemode.Snippet, error)
	// GetSnippet returns codemode.ErrNotFound for an unknown name.
	GetSnippet(ctx context.Context, name string) (*codemode.Snippet, error)
}

// Snippets are the saved snippets as search and describe see them. It is
// safe for concurrent use and outlives catalogs.
type Snippets struct {
	store SnippetStore
	last  atomic.Pointer[snippetIndex] // as last searched
}

// NewSnippets returns the snippets of store.
func NewSnippets(store SnippetStore) *Snippets { return &Snippets{store: store} }

// snippetName is what a snippet may be called.
var snippetName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// MaxSnippetName bounds a snippet's name, in bytes.
const MaxSnippetName = 64

// CheckSnippetName returns why name cannot be a snippet's, or nil.
func CheckSnippetName(name string) error {
	switch {
	case len(name) > MaxSnippetName:
		return fmt.Errorf("invalid snippet name %q: %d bytes; at most %d", short.Clip(name, MaxSnippetName), len(name), MaxSnippetName)
	case !snippetName.MatchString(name):
		return fmt.Errorf("invalid snippet name %q: use letters, digits, _ and -, not starting with a digit", name)
	}
	return nil
}

// Get returns the snippet called name; codemode.ErrNotFound when there is
// none, without asking the store when no snippet can have that name (a
// program's or a client's string may be of any length).
func (s *Snippets) Get(ctx context.Context, name string) (*codemode.Snippet, error) {
	if CheckSnippetName(name) != nil {
		return nil, codemode.ErrNotFound
	}
	return s.store.GetSnippet(ctx, name)
}

// snippetIndex is the last search index made with the saved snippets:
// their segment is kept while they do not change, and the index while
// neither they nor the catalog's index does (an index's statistics and
// meanings are made once, not per query).
type snippetIndex struct {
	key  string // the snippets' names and when each was last saved (stampsKey)
	seg  *search.Segment[*SearchResult]
	base *searchIndex // the catalog's index
	ix   *searchIndex // base with seg
}

// index returns base with the segment of the saved snippets (base when
// there are none), reusing the last one made while nothing changed. What
// changed is told by the snippets' stamps (their names and when each was
// last saved), which do not read their code: the snippets are read whole
// only to make a new segment.
func (sns *Snippets) index(ctx context.Context, base *searchIndex) (*searchIndex, error) {
	stamps, err := sns.store.SnippetStamps(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	if len(stamps) == 0 {
		return base, nil
	}
	key := stampsKey(stamps)
	cur := sns.last.Load()
	if cur != nil && cur.key == key && cur.base == base {
		return cur.ix, nil
	}
	if cur == nil || cur.key != key {
		snips, err := sns.store.ListSnippets(ctx)
		if err != nil {
			return nil, fmt.Errorf("list snippets: %w", err)
		}
		if len(snips) == 0 { // (deleted meanwhile)
			return base, nil
		}
		// (The segment is keyed by the stamps read before: one saved
		// meanwhile is indexed again at the next search, and a snippet
		// the store lists stamped but cannot read does not make every
		// search read them all.)
		docs := make([]search.Doc[*SearchResult], 0, len(snips))
		for _, sn := range snips {
			var d search.Doc[*SearchResult]
			d.Value = &SearchResult{Path: "snippets." + sn.Name, Kind: kindSnippet, Description: summary(sn.Description)}
			d.Fields[search.Name] = sn.Name
			first, rest := splitFirstLine(sn.Description)
			d.Fields[search.Summary] = first
			d.Fields[search.Text] = rest
			d.Fields[search.Params], _ = schemaText(sn.InputSchema)
			d.Fields[search.Container] = "snippet"
			docs = append(docs, d)
		}
		cur = &snippetIndex{key: key, seg: search.NewSegment(docs)}
	}
	next := &snippetIndex{key: cur.key, seg: cur.seg, base: base, ix: base.With(snippetsSegment, cur.seg)}
	sns.last.Store(next)
	return next.ix, nil
}

// stampsKey names the snippets' state by their names and when each was
// last saved.
func stampsKey(snips []codemode.Snippet) string {
	var key strings.Builder
	for _, sn := range snips {
		fmt.Fprintf(&key, "%s\x00%d\x00", sn.Name, sn.CreatedAt.UnixNano())
	}
	return key.String()
}

// snippetsSegment names the snippets' segment; connector names cannot
// contain a space.
const snippetsSegment = " snippets"

// Search answers codemode.search(query): connectors, methods and the
// snippets ranked by the index (see package internal/search), best first,
// ties by path, at most maxSearchResults; total counts every match. An
// empty query lists everything.
func (c *Catalog) Search(ctx context.Context, snippets *Snippets, query string) (SearchAnswer, error) {
	if len(query) > maxSearchQuery {
		// Every word of a query is looked up, and a word no document has
		// is compared with the whole vocabulary: a query is a few words.
		return SearchAnswer{}, fmt.Errorf("codemode.search: the query is %d bytes long; at most %d (a few words name a method)", len(query), maxSearchQuery)
	}
	ix, err := snippets.index(ctx, c.index())
	if err != nil {
		return SearchAnswer{}, err
	}
	found := ix.Search(query)
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
	slices.SortStableFunc(found, func(a, b search.Hit[*SearchResult]) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Value.Path, b.Value.Path)
	})
	found = found[:min(n, maxSearchResults)]
	hits := make([]SearchResult, len(found))
	for i, h := range found {
		hits[i] = *h.Value
		hits[i].Score = h.Score
	}
	return SearchAnswer{hits, total}, nil
}

// round2 rounds a score to the two decimals results show.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// summary is the first line of a description, at most 200 bytes.
func summary(s string) string { return short.Clip(short.FirstLine(s), 200) }

// Describe answers codemode.describe(path) for a connector ("notes"), a
// method ("notes.createNote"), a namespace of connectors ("github" for
// github.issues) or a snippet ("snippets.name"): its kind, description,
// approval flag and TypeScript, and a connector's or a namespace's groups
// and methods. An unknown path is an error naming the nearest paths.
func (c *Catalog) Describe(ctx context.Context, snippets *Snippets, path string) (*Description, error) {
	var d *Description
	s, method, hasDot := c.splitPath(path)
	if s != nil && s.Available() {
		switch t := s.byName[method]; {
		case !hasDot:
			d = s.describeConnector(path)
		case t != nil:
			d = t.describeMethod(path)
		}
	}
	if ns := c.inNamespace(path); d == nil && s == nil && len(ns) > 0 {
		d = describeNamespace(path, ns)
	}
	if name, ok := strings.CutPrefix(path, "snippets."); d == nil && ok {
		sn, err := snippets.Get(ctx, name)
		switch {
		case err == nil:
			name, _ := json.Marshal(sn.Name)
			d = &Description{
				Path: path, Kind: kindSnippet, Description: sn.Description,
				Types:       fmt.Sprintf("declare function run(name: %s, input: %s): Promise<unknown>;\n", name, typegen.Schema(sn.InputSchema)), // no schema: unknown
				InputSchema: sn.InputSchema, Code: sn.Code,
			}
		case !errors.Is(err, codemode.ErrNotFound):
			return nil, fmt.Errorf("load snippet %s: %w", name, err)
		}
	}
	if d == nil {
		// The search index holds every path: each available connector,
		// its methods and the saved snippets; a query without words
		// lists them.
		ix, err := snippets.index(ctx, c.index())
		if err != nil {
			return nil, err
		}
		var paths []string
		for _, h := range ix.Search("") {
			paths = append(paths, h.Value.Path)
		}
		return nil, fmt.Errorf("unknown path %q; nearest: %s", short.Clip(path, 80), ListOrNone(Nearest(path, paths, 5)))
	}
	return d, nil
}
