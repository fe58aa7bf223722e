package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
)

// compileSchema compiles a JSON Schema with an ECMAScript regex engine (real
// schemas use lookahead) and no loader: remote and file references are
// refused rather than fetched. shared, when not nil, is a connector's
// decoded definitions (connectors.Capabilities.Definitions): the schemas
// there that raw's local references need and raw lacks are added to it
// first.
func compileSchema(raw json.RawMessage, shared any) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	if shared != nil {
		doc = withShared(doc, shared)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.UseRegexpEngine(ecmaRegexp)
	const loc = "codemode-input.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return sch, nil
}

// inputSchema returns the tool's compiled input schema, or nil when it does
// not compile (the tool is then called unvalidated; the source decides).
func (t *tool) inputSchema(log interface{ Warn(string, ...any) }) *jsonschema.Schema {
	t.schemaOnce.Do(func() {
		sch, err := compileSchema(t.def.InputSchema, t.src.sharedForValidation())
		if err != nil {
			log.Warn("input schema does not compile; arguments are passed unvalidated", "connector", t.src.name, "method", t.def.Name, "err", err)
			return
		}
		t.schema = sch
	})
	return t.schema
}

// validateValue checks arguments already decoded (by decodeJSON or
// jsonschema.UnmarshalJSON: numbers as json.Number) against sch and returns
// an error listing every violation with its JSON pointer, or nil.
// what names the value ("arguments for kv.put").
func validateValue(sch *jsonschema.Schema, what string, inst any) error {
	if sch == nil {
		return nil
	}
	err := sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("invalid %s: %w", what, err)
	}
	return fmt.Errorf("invalid %s:\n- %s", what, strings.Join(schemacheck.Violations(ve), "\n- "))
}

// regexMatchTimeout bounds one pattern match, so a catastrophic pattern in a
// tool's schema cannot stall a call.
const regexMatchTimeout = time.Second

// ecmaRegexp compiles JSON Schema patterns as ECMAScript regexes.
func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = regexMatchTimeout
	return (*ecmaRe)(re), nil
}

type ecmaRe regexp2.Regexp

func (re *ecmaRe) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}

func (re *ecmaRe) String() string { return (*regexp2.Regexp)(re).String() }

// sharedForValidation returns the source's definitions decoded as the
// validator decodes schemas, or nil.
func (s *source) sharedForValidation() any {
	s.valOnce.Do(func() {
		if len(s.defs) == 0 {
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.defs))
		if err == nil {
			s.valDefs = v
		}
	})
	return s.valDefs
}

// withShared adds to schema doc (freshly decoded: it is changed) the parts
// of shared that its local references (and theirs, transitively) name and
// that doc lacks, at the same places. shared's values are added, not
// copied, and never changed: a reference that passes through one of them
// resolves in doc exactly when it does in shared.
func withShared(doc, shared any) any {
	m, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	queue := []any{m}
	seen := map[string]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		localRefs(v, 0, func(ref string) {
			if seen[ref] {
				return
			}
			seen[ref] = true
			if _, ok := jsonPointer(m, ref[1:]); ok {
				return
			}
			target, ok := jsonPointer(shared, ref[1:])
			if ok && setPointer(m, ref[1:], target) {
				queue = append(queue, target)
			}
		})
	}
	return m
}

// localRefs calls f with every local $ref ("#/…") within v.
func localRefs(v any, depth int, f func(string)) {
	if depth > 200 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok && strings.HasPrefix(r, "#/") {
			f(r)
		}
		for _, e := range x {
			localRefs(e, depth+1, f)
		}
	case []any:
		for _, e := range x {
			localRefs(e, depth+1, f)
		}
	}
}

// pointerTokens splits a JSON pointer (URI fragment form) into its tokens.
func pointerTokens(ptr string) ([]string, bool) {
	if p, err := url.PathUnescape(ptr); err == nil {
		ptr = p
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, true
}

// jsonPointer resolves a JSON pointer through objects (arrays are not
// definition containers).
func jsonPointer(root any, ptr string) (any, bool) {
	toks, ok := pointerTokens(ptr)
	if !ok {
		return nil, false
	}
	cur := root
	for _, t := range toks {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[t]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setPointer sets the value at ptr in root, making the objects missing on
// the way; false when a non-object is in the way.
func setPointer(root map[string]any, ptr string, v any) bool {
	toks, ok := pointerTokens(ptr)
	if !ok || len(toks) == 0 {
		return false
	}
	cur := root
	for _, t := range toks[:len(toks)-1] {
		switch x := cur[t].(type) {
		case map[string]any:
			cur = x
		case nil:
			m := map[string]any{}
			cur[t] = m
			cur = m
		default:
			return false
		}
	}
	cur[toks[len(toks)-1]] = v
	return true
}
