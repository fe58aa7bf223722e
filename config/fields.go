package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

// Every key of the native format is a field of the Config types with a
// `cfg` tag, and one walker (value) decodes them all: the tag says the key
// and how its value is read, the field's Go type says what it is. So a
// key is added by adding a tagged field, and every key gets the same
// unknown-key check, type errors, units and positions.
//
// The tag is the key, then options:
//
//	nonempty     a string (or each string of a list) must not be empty
//	secret       a string is a value a connector is given or sends: what it
//	             takes from the environment is kept (str; else setting)
//	path         a non-empty path, resolved against the file's directory
//	url          an absolute http(s) URL (httpURL; a secret)
//	oneof=a|b    one of these words, case-insensitively
//	positive     a duration, size or count must be above zero
//	globs        a list of path.Match patterns
//	raw          a map's values are taken as written (no ${…} expansion)
//	check=NAME   a check of checks after the value was read (for a list,
//	             of each string)
//	on=w|w       (connectors) the kinds the key applies to, by the key that
//	             chooses them: builtin, command, url, openapi
//
// By type: string, bool, int (a count, at least 0, or 1 when positive),
// int64 (a size), time.Duration, float64 (a ratio from 0 to 1), []string,
// map[string]string, a struct (a mapping of its own tagged fields), a
// pointer (set when the key is written; a struct behind one is described
// by its keys in type errors). A type with a decode method (nodeDecoder)
// reads itself; a struct with a check method (checker) is checked as a
// whole after its keys.

// rule is how one key is read: its field's tag, parsed.
type rule struct {
	key                                               string
	index                                             []int // of the field, for FieldByIndex
	nonempty, secret, path, url, positive, globs, raw bool
	oneOf, on                                         []string
	check                                             string
}

// A nodeDecoder reads its value from a node itself (a value that has more
// than one form, such as inherit_env's true or list).
type nodeDecoder interface {
	decode(d *decoder, n *node, fp fieldPath)
}

// A checker checks a decoded mapping as a whole: keys that go together or
// exclude each other, defaults that depend on others.
type checker interface {
	check(d *decoder, n *node, fp fieldPath)
}

// rules returns the rules of struct type t's tagged fields, in field
// order; an embedded struct without a tag adds its own in place.
func rules(t reflect.Type) []rule {
	var out []rule
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("cfg")
		if !ok {
			if sf.Anonymous {
				for _, r := range rules(sf.Type) {
					r.index = append([]int{i}, r.index...)
					out = append(out, r)
				}
			}
			continue
		}
		opts := strings.Split(tag, ",")
		r := rule{key: opts[0], index: []int{i}}
		flags := map[string]*bool{"nonempty": &r.nonempty, "secret": &r.secret, "path": &r.path, "url": &r.url,
			"positive": &r.positive, "globs": &r.globs, "raw": &r.raw}
		for _, o := range opts[1:] {
			name, arg, _ := strings.Cut(o, "=")
			switch {
			case flags[name] != nil:
				*flags[name] = true
			case name == "oneof":
				r.oneOf = strings.Split(arg, "|")
			case name == "on":
				r.on = strings.Split(arg, "|")
			case name == "check" && checks[arg] != nil:
				r.check = arg
			default:
				panic(fmt.Sprintf("config: bad option %q in the tag of %s.%s", o, t.Name(), sf.Name))
			}
		}
		out = append(out, r)
	}
	return out
}

// keys returns the keys of struct type t, in field order.
func keys(t reflect.Type) []string {
	var out []string
	for _, r := range rules(t) {
		out = append(out, r.key)
	}
	return out
}

// ruleOf returns the rule of key in struct type t.
func ruleOf(t reflect.Type, key string) (rule, bool) {
	rs := rules(t)
	i := slices.IndexFunc(rs, func(r rule) bool { return r.key == key })
	if i < 0 {
		return rule{}, false
	}
	return rs[i], true
}

// member decodes e into the field of struct v that its key names, and
// reports whether there is one.
func (d *decoder) member(v reflect.Value, e entry, fp fieldPath) bool {
	r, ok := ruleOf(v.Type(), e.key)
	if ok {
		d.value(e.val, fp.key(e.key), v.FieldByIndex(r.index), r)
	}
	return ok
}

// object decodes a mapping into struct v: every key must be one of its
// fields'; null is an empty mapping.
func (d *decoder) object(n *node, fp fieldPath, v reflect.Value) {
	for _, e := range d.entries(n, fp) {
		if !d.member(v, e, fp) {
			d.unknownKey(e, fp, keys(v.Type()))
		}
	}
	if c, ok := v.Addr().Interface().(checker); ok {
		c.check(d, n, fp)
	}
}

// value decodes n into v as r says, and reports whether it did; v keeps
// what it had when it did not.
func (d *decoder) value(n *node, fp fieldPath, v reflect.Value, r rule) bool {
	d.at[fp] = n.pos
	if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
		nd.decode(d, n, fp)
		return true
	}
	var x any
	ok := true
	unit := "" // of a duration or a size, which positive may bound
	switch t := v.Type(); {
	case t == reflect.TypeFor[time.Duration]():
		x, ok = d.duration(n, fp)
		unit = "duration"
	case t.Kind() == reflect.Struct:
		d.object(n, fp, v)
		return true
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if t.Elem().Kind() == reflect.Struct && n.kind != mapNode && n.kind != nullNode {
			d.typeErr(n, fp, "{"+strings.Join(keys(t.Elem()), ", ")+"}")
			return false
		}
		if ok = d.value(n, fp, p.Elem(), r); ok {
			v.Set(p)
		}
		return ok
	case t.Kind() == reflect.String:
		x, ok = d.text(n, fp, r)
	case t.Kind() == reflect.Bool:
		x, ok = d.boolean(n, fp)
	case t.Kind() == reflect.Int:
		least := int64(0)
		if r.positive {
			least = 1
		}
		x, ok = d.count(n, fp, least)
	case t.Kind() == reflect.Int64:
		x, ok = d.size(n, fp)
		unit = "size"
	case t.Kind() == reflect.Float64:
		x, ok = d.ratio(n, fp)
	case t.Kind() == reflect.Slice:
		x = d.list(n, fp, r)
	case t.Kind() == reflect.Map:
		x = d.strMap(n, fp, r.raw)
	default:
		panic(fmt.Sprintf("config: %s: no decoder for %s", fp, t))
	}
	if ok && r.positive && unit != "" && reflect.ValueOf(x).Int() <= 0 {
		d.errAt(n.pos, fp, "must be a positive "+unit)
		return false
	}
	if ok && r.check != "" && v.Kind() != reflect.Slice { // a list checks its items
		x, ok = checks[r.check](d, n, fp, x)
	}
	if ok {
		v.Set(reflect.ValueOf(x))
	}
	return ok
}

// text reads a string as r says: its form (url, oneof, secret or a
// setting), then nonempty and path.
func (d *decoder) text(n *node, fp fieldPath, r rule) (string, bool) {
	var s string
	var ok bool
	switch {
	case r.url:
		s, ok = d.httpURL(n, fp)
	case r.oneOf != nil:
		s, ok = d.oneOf(n, fp, r.oneOf...)
	case r.secret:
		s, ok = d.str(n, fp)
	default:
		s, ok = d.setting(n, fp)
	}
	if ok && (r.nonempty || r.path) && strings.TrimSpace(s) == "" {
		d.errAt(n.pos, fp, "must not be empty")
		return "", false
	}
	if ok && r.path {
		s = d.resolvePath(s)
	}
	return s, ok
}

// check is a check=NAME of a tag: it checks (and may change) a value read,
// reporting what is wrong at n.
type check func(d *decoder, n *node, fp fieldPath, v any) (any, bool)

// checks are the checks tags name.
var checks = map[string]check{
	"addr":   errCheck(func(s string) error { return checkHostPort(s, DefaultAddr) }),
	"listen": errCheck(CheckListenAddr),
	"origin": errCheck(func(s string) error {
		if s == "*" || s == "null" {
			return fmt.Errorf("%q would let any web page drive the server; list the origins (such as \"https://app.example.com\") that may", s)
		}
		u, err := url.Parse(strings.TrimSuffix(s, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("expected an origin such as \"https://app.example.com\" or \"http://localhost:6274\" (scheme, host and port only), got %q", s)
		}
		return nil
	}, func(s string) string { // in the form browsers send: lower case, no default port
		u, _ := url.Parse(strings.TrimSuffix(s, "/"))
		scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		if p := u.Port(); scheme == "https" && p == "443" || scheme == "http" && p == "80" {
			host = strings.TrimSuffix(host, ":"+p)
		}
		return scheme + "://" + host
	}),
	"host": errCheck(func(s string) error {
		h := strings.ToLower(strings.TrimSpace(s))
		name := h
		if host, port, err := net.SplitHostPort(h); err == nil && port != "" {
			name = host
		}
		if name == "" || strings.ContainsAny(h, "/*@ ?#") {
			return fmt.Errorf("expected a host name such as \"mcp.example.com\" or \"mcp.example.com:8931\", got %q", s)
		}
		return nil
	}, func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }),
	"store": func(d *decoder, n *node, fp fieldPath, v any) (any, bool) { // a file, or a PostgreSQL URL
		if IsPostgresURL(v.(string)) {
			if _, err := url.Parse(v.(string)); err != nil {
				d.errAt(n.pos, fp, "the URL does not parse; write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE (its password percent-encoded)")
				return nil, false
			}
			return v, true
		}
		p := d.resolvePath(v.(string))
		// What is there already and cannot be the SQLite file is said here,
		// where the file says it, rather than when the store is opened.
		for at := p; ; at = filepath.Dir(at) {
			fi, err := os.Stat(at)
			switch {
			case err == nil && at == p && fi.IsDir():
				d.errAt(n.pos, fp, fmt.Sprintf("%s is a directory: name the SQLite file in it, such as %s", p, filepath.Join(p, "codemode.db")))
				return nil, false
			case err == nil && !fi.IsDir() && at != p:
				d.errAt(n.pos, fp, fmt.Sprintf("%s is a file, not a directory the SQLite file %s can be in", at, p))
				return nil, false
			}
			if err == nil || filepath.Dir(at) == at {
				return p, true
			}
		}
	},
	"lease": func(d *decoder, n *node, fp fieldPath, v any) (any, bool) {
		if v.(time.Duration) < MinLease {
			d.errAt(n.pos, fp, fmt.Sprintf("must be at least %s (a process renews its lease every third of it)", MinLease))
			return nil, false
		}
		return v, true
	},
	"issuer":      errCheck(oauth.CheckIssuer),
	"resource":    errCheck(checkResource),
	"endpoint":    errCheck(func(s string) error { return oauth.CheckURL(s, "the introspection endpoint") }),
	"redirectURI": errCheck(checkRedirectURI),
	"scope":       scope("expected a scope (no spaces or quotes), got %q"),
	"oauthScope":  scope("a scope is one word without spaces or quotes; got %q"),
	"metadataURL": errCheck(func(s string) error {
		if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			return fmt.Errorf("a client ID metadata document's URL is https with a path, such as \"https://example.com/codemode-mcp.json\"; got %q", s)
		}
		return nil
	}),
	"privateKey": checkPrivateKey,
	"builtin":    errCheck(checkBuiltin),
	"openapi":    checkOpenAPI,
	"envNames":   checkEnvNames,
	"revert":     checkRevert,
}

// errCheck makes a check of a string from a function that says what is
// wrong with it, and optionally one that puts it in its canonical form.
func errCheck(f func(string) error, canon ...func(string) string) check {
	return func(d *decoder, n *node, fp fieldPath, v any) (any, bool) {
		s := v.(string)
		if err := f(s); err != nil {
			d.errAt(n.pos, fp, err.Error())
			return nil, false
		}
		for _, c := range canon {
			s = c(s)
		}
		return s, true
	}
}

// scope makes a check of an OAuth scope: one that is empty or holds what
// RFC 6749's scope-token cannot (a space, a quote, a backslash, a control
// or a non-ASCII character) is refused with the message format gives.
func scope(format string) check {
	return errCheck(func(s string) error {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r >= 0x7f }) {
			return fmt.Errorf(format, s)
		}
		return nil
	})
}

// checkHostPort checks a listen address written host:port.
func checkHostPort(v, example string) error {
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		return fmt.Errorf("expected host:port such as %q, got %q", example, v)
	}
	return nil
}
