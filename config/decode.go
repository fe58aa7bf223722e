package config

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	// addrPos is where server.addr was written, for the warning about an
	// unauthenticated listener.
	addrPos pos
	// tlsPos is where tls_cert or tls_key was written.
	tlsPos pos
	// perUser are the connectors with credentials: per_user.
	perUser []perUserAt
	// tokenPos is where server.auth_token was written.
	tokenPos pos
	// authPos is where server.auth was written.
	authPos pos
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

// field is one known key of a mapping and how to decode its value.
type field struct {
	key string
	set func(n *node, fp fieldPath)
}

// object decodes a mapping whose keys must all be known; null is an empty
// mapping.
func (d *decoder) object(n *node, fp fieldPath, fields []field) {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	for _, e := range d.entries(n, fp) {
		found := false
		for _, f := range fields {
			if f.key == e.key {
				f.set(e.val, fp.key(e.key))
				found = true
				break
			}
		}
		if !found {
			d.unknownKey(e, fp, keys)
		}
	}
}

func (d *decoder) unknownKey(e entry, fp fieldPath, known []string) {
	if hint := didYouMean(e.key, known); hint != "" {
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
	if n.kind != scalarNode {
		d.typeErr(n, fp, "a string")
		return "", nil, false
	}
	if n.stype != strScalar {
		return n.text, nil, true
	}
	s, env, err := d.vars.expand(n.text)
	if err != nil {
		d.errAt(n.pos, fp, err.Error())
		return "", nil, false
	}
	return s, env, true
}

// raw returns a string scalar without expansion.
func (d *decoder) raw(n *node, fp fieldPath) (string, bool) {
	if n.kind != scalarNode {
		d.typeErr(n, fp, "a string")
		return "", false
	}
	return n.text, true
}

// nonEmpty is str for values that must not be empty.
func (d *decoder) nonEmpty(n *node, fp fieldPath) (string, bool) {
	return d.notEmpty(n, fp, d.str)
}

// nonEmptySetting is setting for values that must not be empty.
func (d *decoder) nonEmptySetting(n *node, fp fieldPath) (string, bool) {
	return d.notEmpty(n, fp, d.setting)
}

func (d *decoder) notEmpty(n *node, fp fieldPath, read func(*node, fieldPath) (string, bool)) (string, bool) {
	s, ok := read(n, fp)
	if ok && strings.TrimSpace(s) == "" {
		d.errAt(n.pos, fp, "must not be empty")
		return "", false
	}
	return s, ok
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
	d.errAt(n.pos, fp, fmt.Sprintf("must be one of %s; got %q%s", strings.Join(options, ", "), s, didYouMean(s, options)))
	return "", false
}

// strList decodes a list of strings with str; null is an empty list.
func (d *decoder) strList(n *node, fp fieldPath) []string {
	return d.list(n, fp, d.str)
}

// settingList decodes a list of strings with setting; null is an empty
// list.
func (d *decoder) settingList(n *node, fp fieldPath) []string {
	return d.list(n, fp, d.setting)
}

func (d *decoder) list(n *node, fp fieldPath, read func(*node, fieldPath) (string, bool)) []string {
	switch n.kind {
	case nullNode:
		return nil
	case seqNode:
	default:
		d.typeErr(n, fp, "a list of strings")
		return nil
	}
	out := make([]string, 0, len(n.items))
	for i, item := range n.items {
		if s, ok := read(item, fp.index(i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// globs decodes a list of path.Match patterns, checking their syntax.
func (d *decoder) globs(n *node, fp fieldPath) []string {
	switch n.kind {
	case nullNode:
		return nil
	case seqNode:
	default:
		d.typeErr(n, fp, `a list of globs such as ["write_*"]`)
		return nil
	}
	out := make([]string, 0, len(n.items))
	for i, item := range n.items {
		g, ok := d.setting(item, fp.index(i))
		if !ok {
			continue
		}
		if _, err := path.Match(g, ""); err != nil || g == "" {
			d.errAt(item.pos, fp.index(i), fmt.Sprintf("bad glob %q (path.Match syntax: *, ?, [a-z], \\ escapes)", g))
			continue
		}
		out = append(out, g)
	}
	return out
}

// strMap decodes a mapping of strings; null is an empty map. Values are
// expanded when expand is set.
func (d *decoder) strMap(n *node, fp fieldPath, expand bool) map[string]string {
	es := d.entries(n, fp)
	if len(es) == 0 {
		return nil
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		var s string
		var ok bool
		if expand {
			s, ok = d.str(e.val, fp.key(e.key))
		} else {
			s, ok = d.raw(e.val, fp.key(e.key))
		}
		if ok {
			out[e.key] = s
		}
	}
	return out
}

// integer decodes a whole number (also from an expanded string).
func (d *decoder) integer(n *node, fp fieldPath) (int64, bool) {
	const want = "a whole number"
	if n.kind != scalarNode || n.stype == boolScalar || n.stype == floatScalar {
		d.typeErr(n, fp, want)
		return 0, false
	}
	s, ok := d.setting(n, fp)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 0, 64)
	if err != nil {
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got %q", want, s))
		return 0, false
	}
	return v, true
}

// count decodes an int that must be >= minimum.
func (d *decoder) count(n *node, fp fieldPath, minimum int64) (int, bool) {
	v, ok := d.integer(n, fp)
	if !ok {
		return 0, false
	}
	const maxInt = int64(^uint(0) >> 1)
	if v < minimum || v > maxInt {
		if minimum == 1 {
			d.errAt(n.pos, fp, fmt.Sprintf("must be a positive number, got %d", v))
		} else {
			d.errAt(n.pos, fp, fmt.Sprintf("must be at least %d, got %d", minimum, v))
		}
		return 0, false
	}
	return int(v), true
}

// boolean decodes true or false (also from an expanded string).
func (d *decoder) boolean(n *node, fp fieldPath) (bool, bool) {
	if n.kind != scalarNode || (n.stype != boolScalar && n.stype != strScalar) {
		d.typeErr(n, fp, "true or false")
		return false, false
	}
	s, ok := d.setting(n, fp)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	d.errAt(n.pos, fp, fmt.Sprintf("expected true or false, got %q", s))
	return false, false
}

// duration decodes a Go duration ("60s", "1h30m").
func (d *decoder) duration(n *node, fp fieldPath) (time.Duration, bool) {
	const want = `a duration such as "60s", "5m" or "24h"`
	if n.kind == scalarNode && n.stype == intScalar {
		if n.text == "0" {
			return 0, true
		}
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got the number %s (a duration needs a unit: %q?)", want, n.text, n.text+"s"))
		return 0, false
	}
	if n.kind != scalarNode || n.stype != strScalar {
		d.typeErr(n, fp, want)
		return 0, false
	}
	s, ok := d.setting(n, fp)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got %q", want, s))
		return 0, false
	}
	if v < 0 {
		d.errAt(n.pos, fp, fmt.Sprintf("must not be negative, got %s", s))
		return 0, false
	}
	return v, true
}

// scalarSetting reads a scalar that is not a boolean as setting does;
// anything else is a type error that wants want.
func (d *decoder) scalarSetting(n *node, fp fieldPath, want string) (string, bool) {
	if n.kind != scalarNode || n.stype == boolScalar {
		d.typeErr(n, fp, want)
		return "", false
	}
	return d.setting(n, fp)
}

// size decodes a byte count: 268435456, "256MiB", "1GiB", "512MB".
func (d *decoder) size(n *node, fp fieldPath) (int64, bool) {
	const want = `a size such as "256MiB", "1GiB" or "512MB"`
	s, ok := d.scalarSetting(n, fp, want)
	if !ok {
		return 0, false
	}
	v, err := parseSize(s)
	if err != nil {
		d.errAt(n.pos, fp, fmt.Sprintf("expected %s, got %q (%v)", want, s, err))
		return 0, false
	}
	return v, true
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
		return 0, fmt.Errorf("too large")
	}
	return int64(v), nil
}
