package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// maxSearchResults caps codemode.search results.
const maxSearchResults = 20

// Kinds of catalog items.
const (
	kindConnector = "connector"
	kindMethod    = "method"
	kindSnippet   = "snippet"
)

// searchResult is one hit of codemode.search.
type searchResult struct {
	Path             string  `json:"path"`
	Connector        string  `json:"connector,omitempty"`
	Method           string  `json:"method,omitempty"`
	Kind             string  `json:"kind"`
	Description      string  `json:"description"`
	RequiresApproval bool    `json:"requiresApproval,omitempty"`
	Score            float64 `json:"score"`
}

// description is codemode.describe's value.
type description struct {
	Path             string `json:"path"`
	Kind             string `json:"kind"`
	Description      string `json:"description"`
	RequiresApproval bool   `json:"requiresApproval,omitempty"`
	Types            string `json:"types"`
}

// item is one searchable thing with its scoring material.
type item struct {
	res       searchResult
	primary   []string // name tokens of the item itself
	secondary []string // name tokens of its container (the connector of a method)
	text      []string // description tokens
}

// items lists every connector, method and snippet.
func (r *Runtime) items(ctx context.Context) ([]item, error) {
	var out []item
	for _, s := range r.catalog().sources {
		if !s.available() {
			continue
		}
		desc := s.description
		if desc == "" {
			desc = fmt.Sprintf("%d methods", len(s.tools))
		}
		out = append(out, item{
			res:     searchResult{Path: s.name, Connector: s.name, Kind: kindConnector, Description: summary(desc)},
			primary: tokens(s.name),
			text:    tokens(s.description),
		})
		for _, t := range s.tools {
			desc := t.def.Description
			if desc == "" {
				desc = t.def.Title
			}
			out = append(out, item{
				res: searchResult{
					Path: s.name + "." + t.def.Name, Connector: s.name, Method: t.def.Name, Kind: kindMethod,
					Description: summary(desc), RequiresApproval: t.def.RequiresApproval,
				},
				primary:   append(tokens(t.def.Name), tokens(t.def.SourceName)...),
				secondary: tokens(s.name),
				text:      append(tokens(t.def.Title), tokens(t.def.Description)...),
			})
		}
	}
	snips, err := r.store.ListSnippets(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	for _, sn := range snips {
		out = append(out, item{
			res:       searchResult{Path: "snippets." + sn.Name, Kind: kindSnippet, Description: summary(sn.Description)},
			primary:   tokens(sn.Name),
			secondary: []string{"snippet", "snippets"},
			text:      tokens(sn.Description),
		})
	}
	return out, nil
}

// Search answers codemode.search(query): connectors, methods and snippets
// scored by how well the query's words match their names (split at
// camelCase and snake_case) and descriptions, best first, ties by path, at
// most 20; total counts every match. An empty query lists everything.
func (r *Runtime) Search(ctx context.Context, query string) (json.RawMessage, error) {
	all, err := r.items(ctx)
	if err != nil {
		return nil, err
	}
	q := tokens(query)
	var hits []searchResult
	for _, it := range all {
		score := 1.0
		if len(q) > 0 {
			score = it.score(q)
		}
		if score <= 0 {
			continue
		}
		it.res.Score = math.Round(score*100) / 100
		hits = append(hits, it.res)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Path < hits[j].Path
	})
	total := len(hits)
	if len(hits) > maxSearchResults {
		hits = hits[:maxSearchResults]
	}
	if hits == nil {
		hits = []searchResult{}
	}
	return json.Marshal(struct {
		Results []searchResult `json:"results"`
		Total   int            `json:"total"`
	}{hits, total})
}

// score is the mean over query words of each word's best match.
func (it item) score(q []string) float64 {
	sum := 0.0
	for _, w := range q {
		best := max(
			matchWord(w, it.primary, 1.0),
			matchWord(w, it.secondary, 0.5),
			matchWord(w, it.text, 0.4),
		)
		sum += best
	}
	return sum / float64(len(q))
}

// matchWord scores w against tokens: exact 1, prefix 0.75 (either way, from
// two letters), substring 0.5; times weight.
func matchWord(w string, toks []string, weight float64) float64 {
	best := 0.0
	for _, t := range toks {
		s := 0.0
		switch {
		case t == w:
			s = 1
		case len(w) >= 2 && (strings.HasPrefix(t, w) || strings.HasPrefix(w, t) && len(t) >= 3):
			s = 0.75
		case len(w) >= 3 && strings.Contains(t, w):
			s = 0.5
		}
		best = max(best, s)
	}
	return best * weight
}

// tokens splits text into lower-case words at non-alphanumerics and
// camelCase boundaries ("getSum", "get_sum" and "get-sum" give get, sum).
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, c := range rs {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(c) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return out
}

// summary is the first line of a description, at most 200 bytes.
func summary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return abbreviate(s, 200)
}

// Describe answers codemode.describe(path) for a connector ("notes"), a
// method ("notes.createNote") or a snippet ("snippets.name"): its kind,
// description, approval flag and TypeScript. An unknown path is an error
// naming the nearest paths.
func (r *Runtime) Describe(ctx context.Context, path string) (json.RawMessage, error) {
	var d *description
	conn, method, hasDot := strings.Cut(path, ".")
	if s := r.catalog().byName[conn]; s != nil && s.available() {
		switch t := s.byName[method]; {
		case !hasDot:
			d = &description{Path: path, Kind: kindConnector, Description: s.description, Types: s.declarations()}
		case t != nil:
			d = &description{
				Path: path, Kind: kindMethod, Description: t.typegen().Description,
				RequiresApproval: t.def.RequiresApproval, Types: typegen.MethodDeclaration(s.name, s.typeDefs(), t.typegen()),
			}
		}
	}
	if d == nil && hasDot && conn == "snippets" {
		sn, err := r.store.GetSnippet(ctx, method)
		switch {
		case err == nil:
			input := "unknown"
			if len(sn.InputSchema) > 0 {
				input = typegen.Schema(sn.InputSchema)
			}
			name, _ := json.Marshal(sn.Name)
			d = &description{
				Path: path, Kind: kindSnippet, Description: sn.Description,
				Types: fmt.Sprintf("declare function run(name: %s, input: %s): Promise<unknown>;\n", name, input),
			}
		case !isNotFound(err):
			return nil, fmt.Errorf("load snippet %s: %w", method, err)
		}
	}
	if d == nil {
		all, err := r.items(ctx)
		if err != nil {
			return nil, err
		}
		paths := make([]string, len(all))
		for i, it := range all {
			paths[i] = it.res.Path
		}
		return nil, fmt.Errorf("unknown path %q; nearest: %s", path, listOrNone(nearest(path, paths, 5)))
	}
	return json.Marshal(d)
}
