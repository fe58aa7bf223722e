package config

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
)

// decoder turns the node tree into a Config, collecting every problem
// instead of stopping at the first.
type decoder struct {
	file string // as given, for messages
	dir  string // absolute directory of the file; "" when there is none
	vars *vars  // current ${…} expansion rules (native or client entry)
	// envValues are the values taken from the environment where a secret
	// may stand (Config.EnvValues).
	envValues []string
	errs      []*Error
	warn      []Warning
	// at is where each value was written, by its path: the checks that
	// look at several keys (authToken, checkServerAuth, warnOpenListener,
	// the check methods) report there.
	at map[fieldPath]pos
	// anchors are the YAML anchors defined so far, by name (convert).
	anchors map[string]*node
}

// maxErrors stops a hopeless file from producing pages of output.
const maxErrors = 50

func (d *decoder) errAt(p pos, fp fieldPath, msg string) {
	if len(d.errs) >= maxErrors {
		return
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: p.line, Column: p.col, Field: string(fp), Msg: msg})
}

func (d *decoder) warnAt(p pos, fp fieldPath, msg string) {
	d.warn = append(d.warn, Warning{File: d.file, Line: p.line, Column: p.col, Field: string(fp), Msg: msg})
}

// typeErr reports that n is not what the field expects.
func (d *decoder) typeErr(n *node, fp fieldPath, want string) {
	d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got %s", want, n.describe()))
}

// fieldPath is a dotted path to a value: connectors.files.args[2].
type fieldPath string

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

func (p fieldPath) key(k string) fieldPath {
	if !plainKey.MatchString(k) {
		return fieldPath(fmt.Sprintf("%s[%q]", p, k))
	}
	if p == "" {
		return fieldPath(k)
	}
	return p + "." + fieldPath(k)
}

func (p fieldPath) index(i int) fieldPath {
	return fieldPath(fmt.Sprintf("%s[%d]", p, i))
}

func (d *decoder) unknownKey(e entry, fp fieldPath, known []string) {
	if hint := textdist.DidYouMean(e.key, known); hint != "" {
		d.errAt(e.keyPos, fp.key(e.key), "unknown key"+hint)
		return
	}
	d.errAt(e.keyPos, fp.key(e.key), "unknown key; known keys: "+strings.Join(known, ", "))
}

// entries returns a mapping's entries; null gives none.
func (d *decoder) entries(n *node, fp fieldPath) []entry {
	switch n.kind {
	case mapNode:
		return n.entries
	case nullNode:
		return nil
	}
	d.typeErr(n, fp, "a mapping")
	return nil
}

// str returns a scalar as a string, ${…}-expanded when it was written as a
// string. Numbers and booleans are accepted as written. The values it took
// from the environment are kept as possible secrets (Config.EnvValues):
// str is for values a connector is given or sends (arguments, URLs,
// headers, credentials); settings of codemode-mcp's own, of a fixed form
// or shown by design, are read with setting.
func (d *decoder) str(n *node, fp fieldPath) (string, bool) {
	s, env, ok := d.expanded(n, fp)
	d.envValues = append(d.envValues, env...)
	return s, ok
}

// setting is str for a value that is not a secret by nature: a name, an
// address, a path, a glob, a description, a number, a duration, a size,
// a boolean or one of a list. What it takes from the environment is not
// kept as a secret: scrubbing it would garble ordinary text (a transport
// "http" from ${TRANSPORT} would take every URL apart).
func (d *decoder) setting(n *node, fp fieldPath) (string, bool) {
	s, _, ok := d.expanded(n, fp)
	return s, ok
}

// expanded returns a scalar as a string, ${…}-expanded when it was written
// as a string, and the values the expansion took from the environment.
func (d *decoder) expanded(n *node, fp fieldPath) (string, []string, bool) {
	if !n.scalar() {
		d.typeErr(n, fp, "a string")
		return "", nil, false
	}
	if n.kind != strNode {
		return n.text, nil, true
	}
	s, env, err := d.vars.expand(n.text)
	if err == nil && strings.IndexByte(s, 0) >= 0 {
		// No argument, environment variable, header or URL can hold one:
		// exec would fail later with "invalid argument", naming nothing.
		err = errors.New("holds a NUL byte, which no argument, environment variable, header or URL can")
	}
	if err != nil {
		d.errAt(n.pos, fp, err.Error())
		return "", nil, false
	}
	return s, env, true
}

// oneOf returns a string that must be one of options (case-insensitive).
func (d *decoder) oneOf(n *node, fp fieldPath, options ...string) (string, bool) {
	s, ok := d.setting(n, fp)
	if !ok {
		return "", false
	}
	for _, o := range options {
		if strings.EqualFold(s, o) {
			return o, true
		}
	}
	d.errAt(n.pos, fp, fmt.Sprintf("must be one of %s; got %q%s", strings.Join(options, ", "), s, textdist.DidYouMean(s, options)))
	return "", false
}

// list decodes a list of strings, each read as r says (text); null is an
// empty list.
func (d *decoder) list(n *node, fp fieldPath, r rule) []string {
	switch n.kind {
	case nullNode:
		return nil
	case seqNode:
	default:
		if r.globs {
			d.typeErr(n, fp, `a list of globs such as ["write_*"]`)
		} else {
			d.typeErr(n, fp, "a list of strings")
		}
		return nil
	}
	out := make([]string, 0, len(n.items))
	for i, item := range n.items {
		s, ok := d.text(item, fp.index(i), r)
		if _, err := path.Match(s, ""); ok && r.globs && (err != nil || s == "") {
			d.errAt(item.pos, fp.index(i), fmt.Sprintf("bad glob %q (path.Match syntax: *, ?, [a-z], \\ escapes)", s))
			continue
		}
		var x any = s
		if ok && r.check != "" {
			x, ok = checks[r.check](d, item, fp.index(i), s)
		}
		if ok {
			out = append(out, x.(string))
		}
	}
	return out
}

// strMap decodes a mapping of strings; null is an empty map. Values are
// ${…}-expanded (and kept as possible secrets, as str does) unless raw.
func (d *decoder) strMap(n *node, fp fieldPath, raw bool) map[string]string {
	if n.kind == seqNode {
		// A list of NAME=value (as docker-compose takes env): say how to
		// write it, without the value (it may be a secret).
		want := "a mapping, one NAME: value a line"
		if len(n.items) > 0 && n.items[0].kind == strNode {
			if k, _, ok := strings.Cut(n.items[0].text, "="); ok && plainKey.MatchString(k) {
				want += fmt.Sprintf(" (write - %s=… as %s: …)", k, k)
			}
		}
		d.typeErr(n, fp, want)
		return nil
	}
	es := d.entries(n, fp)
	if len(es) == 0 {
		return nil
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		s, ok := e.val.text, e.val.scalar()
		switch {
		case !raw:
			s, ok = d.str(e.val, fp.key(e.key))
		case !ok:
			d.typeErr(e.val, fp.key(e.key), "a string")
		}
		if ok {
			out[e.key] = s
		}
	}
	return out
}

// errBad is a value that parse refuses with nothing to add to "expected
// …, got …".
var errBad = errors.New("")

// scalar reads a scalar of one of the YAML types given as setting does
// (so also from an expanded string) and parses it. Another node is a type
// error wanting want; what parse refuses is "expected want, got "text"",
// with parse's reason (unless errBad) in parentheses.
func scalar[T any](d *decoder, n *node, fp fieldPath, want string, types []nodeKind, parse func(string) (T, error)) (T, bool) {
	var v T
	if !slices.Contains(types, n.kind) {
		d.typeErr(n, fp, want)
		return v, false
	}
	s, ok := d.setting(n, fp)
	if !ok {
		return v, false
	}
	v, err := parse(strings.TrimSpace(s))
	switch {
	case err == errBad:
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got %q", want, s))
	case err != nil:
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got %q (%v)", want, s, err))
	}
	return v, err == nil
}

// count decodes a whole number (an int) that must be >= minimum.
func (d *decoder) count(n *node, fp fieldPath, minimum int64) (int, bool) {
	v, ok := scalar(d, n, fp, "a whole number", []nodeKind{strNode, intNode}, func(s string) (int64, error) {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, errBad
		}
		return v, nil
	})
	switch {
	case !ok:
		return 0, false
	case (v < minimum || v > math.MaxInt) && minimum == 1:
		d.errAt(n.pos, fp, fmt.Sprintf("must be a positive number, got %d", v))
	case v < minimum || v > math.MaxInt:
		d.errAt(n.pos, fp, fmt.Sprintf("must be at least %d, got %d", minimum, v))
	default:
		return int(v), true
	}
	return 0, false
}

// boolean decodes true or false (also from an expanded string).
func (d *decoder) boolean(n *node, fp fieldPath) (bool, bool) {
	return scalar(d, n, fp, "true or false", []nodeKind{strNode, boolNode}, func(s string) (bool, error) {
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, errBad
	})
}

// duration decodes a Go duration ("60s", "1h30m"); a number is a type
// error but 0.
func (d *decoder) duration(n *node, fp fieldPath) (time.Duration, bool) {
	const want = `a duration such as "60s", "5m" or "24h"`
	if n.kind == intNode {
		if n.text == "0" {
			return 0, true
		}
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got the number %s (a duration needs a unit: %q?)", want, n.text, n.text+"s"))
		return 0, false
	}
	v, ok := scalar(d, n, fp, want, []nodeKind{strNode}, func(s string) (time.Duration, error) {
		v, err := time.ParseDuration(s)
		if err != nil {
			return 0, errBad
		}
		return v, nil
	})
	if ok && v < 0 {
		d.errAt(n.pos, fp, fmt.Sprintf("must not be negative, got %s", v))
		return 0, false
	}
	return v, ok
}

// numbers are the scalars a size or a ratio may be written as.
var numbers = []nodeKind{strNode, intNode, floatNode}

// size decodes a byte count: 268435456, "256MiB", "1GiB", "512MB".
func (d *decoder) size(n *node, fp fieldPath) (int64, bool) {
	return scalar(d, n, fp, `a size such as "256MiB", "1GiB" or "512MB"`, numbers, parseSize)
}

// ratio decodes a number from 0 to 1.
func (d *decoder) ratio(n *node, fp fieldPath) (float64, bool) {
	return scalar(d, n, fp, "a number from 0 to 1", numbers, func(s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return 0, errBad
		}
		return v, nil
	})
}

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// parseSize parses a number of bytes with an optional decimal (KB, MB, …)
// or binary (KiB, MiB, …) unit, case-insensitively.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '_') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	if num == "" {
		return 0, fmt.Errorf("no number")
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q; use B, KB, MB, GB, KiB, MiB or GiB", strings.TrimSpace(s[i:]))
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(num, "_", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", num)
	}
	v := f * mult
	if v >= 1<<63 {
		return 0, fmt.Errorf("too large: at most 8388607TiB")
	}
	return int64(v), nil
}
