package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// yamlToJSON converts a YAML document to JSON text, bounded as a JSON
// document is; it stops with ctx's error once ctx is done.
//
// The document is read as a node tree (go.yaml.in/yaml/v4, in time
// linear in its size) and written here, rather than decoded to Go values:
// goccy/go-yaml, which reads the configuration, parses a mapping in time
// quadratic in its keys (64,000 keys, 1 MB, took 65 s; 4,000 chained
// merge keys, 143 KB, 45 s), and a document from a URL is hostile. The
// tree shares what aliases stand for, and the JSON form repeats it, so a
// few hundred bytes of aliases could stand for gigabytes ("billion
// laughs"): the writer counts what it writes and what merge keys copy,
// and stops past maxDocumentBytes.
//
// Linear is still slow: a node takes 152 bytes and a YAML document can
// have one every two bytes, so 4 MiB of "[a,a,…]" allocated 500 MiB and
// took seconds to parse and as long to write. The parser reads its input
// through ctxReader and the writer checks ctx every yamlCheckEvery
// values, so a canceled start, or Remote.Close, does not wait for it.
//
// The tree is made whole before anything is written, so a YAML document
// is bounded by its size too, below a JSON one (see maxYAMLBytes).
func yamlToJSON(ctx context.Context, raw []byte) ([]byte, error) {
	if len(raw) > maxYAMLBytes {
		return nil, fmt.Errorf("the YAML document is %d MiB, larger than the %d MiB a YAML document may be (a JSON one may be %d MiB): convert it to JSON",
			len(raw)>>20, maxYAMLBytes>>20, maxDocumentBytes>>20)
	}
	var doc yaml.Node
	err := yaml.NewDecoder(ctxReader{ctx, bytes.NewReader(raw)}).Decode(&doc)
	switch {
	case errors.Is(err, io.EOF):
		return []byte("null"), nil // an empty document: not OpenAPI, derive says
	case err != nil:
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr // the reader's, which the parser reports as text
		}
		return nil, fmt.Errorf("the document is neither JSON nor YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return []byte("null"), nil
	}
	w := yamlWriter{ctx: ctx, written: map[*yaml.Node]yamlSpan{}}
	if err := w.value(doc.Content[0], 0); err != nil {
		return nil, err
	}
	return w.b, nil
}

// ctxReader reads r until ctx is done. The YAML parser reads its input in
// chunks of 512 bytes, so reading through it ends a parse soon after ctx
// is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// maxYAMLBytes bounds a YAML document. Its node tree takes up to about
// 150 times its size ("[a,a,…]": 4 MiB peaked at 644 MB), against 40 for
// a JSON document, so at JSON's bound of 64 MiB one could take nearly 10
// GB. 40 MiB keeps the largest document published as YAML, Microsoft
// Graph's v1.0 (35 MB), at a worst case of about 6 GB; real documents
// take under 20 times theirs (GitHub's as 9.8 MB of YAML: 183 MB). A
// larger one is to be converted to JSON.
const maxYAMLBytes = 40 << 20

// yamlCheckEvery is how many values the writer writes between checks of
// its context.
const yamlCheckEvery = 1024

// errYAMLTooLarge is a YAML document whose JSON form is over the bound.
var errYAMLTooLarge = fmt.Errorf("the YAML document is larger than %d MiB as JSON, its aliases expanded", maxDocumentBytes>>20)

// mergeCost is what merging one mapping counts against the bound, its
// members aside, and memberCost what each member merged counts besides its
// key: about the work they take, in bytes written. A member costs a map
// insertion and a copy, as much time as writing a few dozen bytes: counted
// as its key alone, 4,000 chained merge keys (143 KB) took seconds to
// refuse.
const (
	mergeCost  = 64
	memberCost = 32
)

// yamlWriter writes a YAML node tree as JSON.
type yamlWriter struct {
	// ctx is checked every yamlCheckEvery values (see yamlToJSON).
	ctx    context.Context
	values int
	b      []byte
	// copied counts what merge keys copied (their members' keys, and
	// mergeCost a mapping), work done before anything is written.
	copied int
	// deepest is the deepest level written.
	deepest int
	// written are the anchored nodes written (an alias copies their JSON)
	// or being written (start < 0: an alias to one is a cycle).
	written map[*yaml.Node]yamlSpan
}

// A yamlSpan is where an anchored node's JSON is in the output, and how
// many levels it nests.
type yamlSpan struct{ start, end, height int }

// value writes n (what an alias stands for: a copy of what its anchor
// wrote) at a level of nesting.
func (w *yamlWriter) value(n *yaml.Node, depth int) error {
	if depth > maxDocDepth {
		return fmt.Errorf("the YAML document nests deeper than %d levels (line %d)", maxDocDepth, n.Line)
	}
	if len(w.b)+w.copied > maxDocumentBytes {
		return errYAMLTooLarge
	}
	if w.values++; w.values%yamlCheckEvery == 0 && w.ctx.Err() != nil {
		return w.ctx.Err()
	}
	w.deepest = max(w.deepest, depth)
	if n = deAlias(n); n.Anchor == "" {
		return w.write(n, depth)
	}
	span, ok := w.written[n]
	switch {
	case ok && span.start < 0:
		return fmt.Errorf("the YAML document's anchor &%s (line %d) contains an alias to itself", n.Anchor, n.Line)
	case ok && depth+span.height > maxDocDepth:
		return fmt.Errorf("the YAML document nests deeper than %d levels (an alias to &%s, line %d)", maxDocDepth, n.Anchor, n.Line)
	case ok:
		w.deepest = max(w.deepest, depth+span.height)
		w.b = append(w.b, w.b[span.start:span.end]...)
		return nil
	}
	w.written[n] = yamlSpan{start: -1}
	start, outer := len(w.b), w.deepest
	w.deepest = depth
	err := w.write(n, depth)
	w.written[n] = yamlSpan{start, len(w.b), w.deepest - depth}
	w.deepest = max(outer, w.deepest)
	return err
}

// write writes n, not an alias.
func (w *yamlWriter) write(n *yaml.Node, depth int) error {
	switch n.Kind {
	case yaml.SequenceNode:
		w.b = append(w.b, '[')
		for i, it := range n.Content {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if err := w.value(it, depth+1); err != nil {
				return err
			}
		}
		w.b = append(w.b, ']')
	case yaml.MappingNode:
		members, err := w.members(n, depth)
		if err != nil {
			return err
		}
		o := obj{b: w.b}
		for _, m := range members {
			o.key(m.key)
			w.b = o.b
			if err := w.value(m.value, depth+1); err != nil {
				return err
			}
			o.b = w.b
		}
		w.b = o.done()
	case yaml.ScalarNode:
		w.b = appendYAMLScalar(w.b, n)
	default:
		return fmt.Errorf("the YAML document has an unexpected node at line %d", n.Line)
	}
	return nil
}

// A yamlMember is one member of a mapping.
type yamlMember struct {
	key   string
	value *yaml.Node
}

// members lists mapping n's members in order, its merge keys ("<<")
// replaced by the members of the mappings they name: a key the mapping
// has itself wins over a merged one, and of merged mappings the first
// that has a key gives it (YAML's merge key type).
func (w *yamlWriter) members(n *yaml.Node, depth int) ([]yamlMember, error) {
	var own map[string]bool // n's own keys, when it merges
	out := make([]yamlMember, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deAlias(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("the YAML document has a mapping key that is not a string at line %d", k.Line)
		}
		if k.ShortTag() != "!!merge" {
			out = append(out, yamlMember{k.Value, v})
			continue
		}
		if own == nil {
			own = map[string]bool{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				if k := deAlias(n.Content[j]); k.ShortTag() != "!!merge" {
					own[k.Value] = true
				}
			}
		}
		sources := []*yaml.Node{v}
		if deAlias(v).Kind == yaml.SequenceNode {
			sources = deAlias(v).Content
		}
		for _, s := range sources {
			if err := w.merge(&out, own, s, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// merge adds the members of s, a merge key's mapping, that out and own
// have not.
func (w *yamlWriter) merge(out *[]yamlMember, own map[string]bool, s *yaml.Node, depth int) error {
	if depth > maxDocDepth {
		return fmt.Errorf("the YAML document nests deeper than %d levels (line %d)", maxDocDepth, s.Line)
	}
	if s = deAlias(s); w.written[s].start < 0 {
		return fmt.Errorf("the YAML document's anchor &%s (line %d) contains an alias to itself", s.Anchor, s.Line)
	}
	if s.Kind != yaml.MappingNode {
		return fmt.Errorf("the YAML document's merge key (<<) at line %d names neither a mapping nor a list of mappings", s.Line)
	}
	ms, err := w.members(s, depth)
	if err != nil {
		return err
	}
	w.copied += mergeCost // even an empty mapping: merging one twice at each level doubles the work
	for _, m := range ms {
		w.copied += len(m.key) + memberCost
		if !own[m.key] {
			own[m.key] = true
			*out = append(*out, m)
		}
	}
	if len(w.b)+w.copied > maxDocumentBytes {
		return errYAMLTooLarge
	}
	return nil
}

// deAlias is the node an alias stands for, or n.
func deAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// appendYAMLScalar appends a scalar as its JSON value: null, a boolean, a
// number (as written when it is a JSON number, so 1.0 stays 1.0 and a
// large integer is not rounded), or a string (a timestamp, binary, or
// anything else as written).
func appendYAMLScalar(b []byte, n *yaml.Node) []byte {
	switch n.ShortTag() {
	case "!!null":
		return append(b, "null"...)
	case "!!bool":
		return strconv.AppendBool(b, strings.EqualFold(n.Value, "true"))
	case "!!int", "!!float":
		if num, ok := yamlNumber(n.Value); ok {
			return append(b, num...)
		}
	}
	return appendString(b, n.Value)
}

// yamlNumber is a YAML number (0x1F, 0o17, 1_000, +1, .5) as JSON; ok is
// false for what JSON cannot say (.inf, .nan).
func yamlNumber(s string) (string, bool) {
	if s != "" && s[0] != '"' && json.Valid([]byte(s)) {
		return s, true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return strconv.FormatInt(i, 10), true
	}
	if u, err := strconv.ParseUint(strings.TrimPrefix(plain, "+"), 0, 64); err == nil {
		return strconv.FormatUint(u, 10), true
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}
