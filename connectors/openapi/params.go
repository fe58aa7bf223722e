package openapi

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// This file serialises parameters as OpenAPI 3's style table says: the
// RFC 6570 styles (simple, label, matrix, form) by one expansion with the
// operator's prefix and separators, and the query-only styles
// (spaceDelimited, pipeDelimited, deepObject, and Swagger 2.0's tsv) by
// their own rules. Values are percent-encoded item by item, so a delimiter
// inside a value ("a,b" in an array item) is encoded and cannot be taken
// for the style's own.

// where names a parameter in errors: by the input property the program
// sets, and its wire name when that differs.
func (p *Param) where() string {
	if p.Prop != p.Name {
		return fmt.Sprintf("input %q (%s parameter %q)", p.Prop, p.In, p.Name)
	}
	return fmt.Sprintf("%s parameter %q", p.In, p.Name)
}

// paramValue returns the value the arguments hold for p; ok is false when
// it is absent or null. A JSON parameter's value becomes its JSON text.
func paramValue(in *value, p *Param) (value, bool) {
	v := in.at(p.Prop)
	if p.JSON && v.kind != kindNull {
		v = value{kind: kindString, text: string(v.appendJSON(nil))}
	}
	return v, v.kind != kindNull
}

// An escaper appends s, percent-encoded for where it goes.
type escaper func(b []byte, s string) []byte

// The escapers: of path values, query names and values, and cookies
// (every byte but RFC 3986's unreserved characters); of multi-segment
// path values ('/' kept); of allowReserved query values (the reserved
// characters a query can hold, and percent-encoded triples, kept); of a
// path template's literal parts (what a path can hold kept); of header
// values (nothing encoded).
var (
	escapeUnreserved = keeping("", false)
	escapeSegments   = keeping("/", false)
	escapeReserved   = keeping(":/?@!$'()*,;=", true)
	escapeLiteral    = keeping("/!$&'()*+,;=:@%", false)
	escapeNone       = func(b []byte, s string) []byte { return append(b, s...) }
)

// keeping is the escaper that keeps RFC 3986's unreserved characters and
// those of keep (and, with triples, valid percent-encoded triples) and
// percent-encodes every other byte.
func keeping(keep string, triples bool) escaper {
	return func(b []byte, s string) []byte {
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case unreserved(c) || strings.IndexByte(keep, c) >= 0:
				b = append(b, c)
			case triples && c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
				b = append(b, s[i:i+3]...)
				i += 2
			default:
				b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
			}
		}
		return b
	}
}

// unreserved reports RFC 3986's unreserved characters, which are never
// encoded.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// An operator is an RFC 6570 expression operator as an OpenAPI style uses
// it.
type operator struct {
	// prefix starts the expansion (".", ";"); sep separates exploded items.
	prefix, sep string
	// named: items are "name=value"; an empty value is "name" when
	// bareEmpty (matrix), else "name=" (form).
	named, bareEmpty bool
}

var (
	opSimple = operator{}
	opQuery  = operator{sep: "&", named: true}
	opCookie = operator{sep: "; ", named: true}
	// pathOperators are the path styles' operators (simple when absent).
	pathOperators = map[string]operator{
		StyleLabel:  {prefix: ".", sep: "."},
		StyleMatrix: {prefix: ";", sep: ";", named: true, bareEmpty: true},
	}
)

// expand appends v (not null) expanded by op: RFC 6570 section 3.2, which
// OpenAPI's style table follows. Array items and object values that are
// themselves arrays or objects are sent as JSON text. An empty array or
// object expands to nothing (RFC 6570's undefined).
func (op operator) expand(b []byte, name string, v value, explode bool, esc escaper) []byte {
	if !v.scalar() && len(v.items) == 0 {
		return b
	}
	sep := cmp.Or(op.sep, ",")
	b = append(b, op.prefix...)
	pair := func(b []byte, k, val string) []byte {
		b = esc(b, k)
		if val == "" && op.bareEmpty {
			return b
		}
		b = append(b, '=')
		return esc(b, val)
	}
	switch {
	case v.scalar():
		if op.named {
			return pair(b, name, v.text)
		}
		return esc(b, v.text)
	case explode: // the items, or an object's members as pairs
		for i, it := range v.items {
			if i > 0 {
				b = append(b, sep...)
			}
			switch {
			case v.kind == kindObject:
				b = pair(b, v.keys[i], it.String())
			case op.named:
				b = pair(b, name, it.String())
			default:
				b = esc(b, it.String())
			}
		}
		return b
	}
	// Not exploded: the items (or keys and values) joined by commas.
	if op.named {
		b = esc(b, name)
		b = append(b, '=')
	}
	return appendJoined(b, v, ",", esc)
}

// appendJoined appends an array's items, or an object's keys and values in
// turn, each encoded, separated by sep.
func appendJoined(b []byte, v value, sep string, esc escaper) []byte {
	for i, it := range v.items {
		if i > 0 {
			b = append(b, sep...)
		}
		if v.kind == kindObject {
			b = esc(b, v.keys[i])
			b = append(b, sep...)
		}
		b = esc(b, it.String())
	}
	return b
}

// expandPath expands an operation's path template with the arguments,
// percent-encoding every value so that it stays inside its segment ('/'
// is encoded unless the parameter is MultiSegment). A segment made "." or
// "..", or left empty, by a parameter is refused: it would send the call
// to another endpoint.
func expandPath(b []byte, op *Operation, in *value) ([]byte, error) {
	// The path parameters, found once: a path (at most 1024 bytes) has a
	// few hundred placeholders at most, but a document may declare any
	// number of other parameters.
	var first [8]*Param
	params := first[:0]
	for i := range op.Params {
		if op.Params[i].In == InPath {
			params = append(params, &op.Params[i])
		}
	}
	for seg := range strings.SplitSeq(strings.TrimPrefix(op.Path, "/"), "/") {
		b = append(b, '/')
		if !strings.Contains(seg, "{") {
			b = escapeLiteral(b, seg)
			continue
		}
		start := len(b)
		var used []*Param
		for seg != "" {
			open := strings.IndexByte(seg, '{')
			closing := strings.IndexByte(seg, '}')
			if open < 0 || closing < open {
				b = escapeLiteral(b, seg)
				break
			}
			b = escapeLiteral(b, seg[:open])
			name := seg[open+1 : closing]
			seg = seg[closing+1:]
			i := slices.IndexFunc(params, func(p *Param) bool { return p.Name == name })
			if i < 0 {
				return nil, fmt.Errorf("path %s: no path parameter %q is declared", op.Path, name)
			}
			p := params[i]
			used = append(used, p)
			v, ok := paramValue(in, p)
			if !ok {
				return nil, fmt.Errorf("%s is required", p.where())
			}
			esc := escapeUnreserved
			if p.MultiSegment {
				esc = escapeSegments
			}
			b = pathOperators[p.Style].expand(b, p.Name, v, p.Explode, esc)
		}
		if err := checkSegments(string(b[start:]), used); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// checkSegments refuses an expanded template segment that is empty or
// holds a "." or ".." segment.
func checkSegments(expanded string, used []*Param) error {
	why := ""
	if expanded == "" {
		why = "the value is empty, which would leave an empty path segment"
	} else if s := dotSegment(expanded); s != "" {
		why = fmt.Sprintf("the value makes the path segment %q, which would change the endpoint called", s)
	} else {
		return nil
	}
	names := make([]string, len(used))
	for i, p := range used {
		names[i] = p.where()
	}
	return fmt.Errorf("%s: %s", strings.Join(names, ", "), why)
}

// dotSegment returns the first "." or ".." segment of an encoded path as
// any server may read it, "" when it has none. Servers differ: some
// decode an encoded '/' ("..%2f") before they split a path, some take a
// backslash for '/' ("..%5c"); so the path is percent-decoded whole and
// split at both.
func dotSegment(escaped string) string {
	for _, s := range decodedSegments(escaped) {
		if s == "." || s == ".." {
			return s
		}
	}
	return ""
}

// decodedSegments are the segments of an encoded path decoded whole (as
// it is, when it does not decode) and split at '/' and '\\'.
func decodedSegments(escaped string) []string {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		p = escaped
	}
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
}

// appendQueryParam appends p's value to a query string (b is empty or
// ends with a complete pair) by p's style.
func appendQueryParam(b []byte, p *Param, v value) []byte {
	esc := escaper(escapeUnreserved)
	if p.AllowReserved {
		esc = escapeReserved
	}
	var piece []byte
	switch {
	case v.scalar() || p.Explode && p.Style != StyleDeepObject:
		piece = opQuery.expand(nil, p.Name, v, p.Explode, esc)
	case p.Style == StyleDeepObject:
		piece = appendDeep(nil, escapeUnreserved(nil, p.Name), v, esc)
	case len(v.items) == 0:
	case p.Style == StyleSpaceDelimited || p.Style == StylePipeDelimited || p.Style == StyleTab:
		piece = escapeUnreserved(nil, p.Name)
		piece = append(piece, '=')
		piece = appendJoined(piece, v, delimiters[p.Style], esc)
	default:
		piece = opQuery.expand(nil, p.Name, v, false, esc)
	}
	if len(piece) == 0 {
		return b
	}
	if len(b) > 0 {
		b = append(b, '&')
	}
	return append(b, piece...)
}

// delimiters are the encoded separators of the delimited query styles.
var delimiters = map[string]string{StyleSpaceDelimited: "%20", StylePipeDelimited: "%7C", StyleTab: "%09"}

// appendDeep appends v as deepObject pairs, name[key]=value, its brackets
// encoded as the style table shows. Nested objects add brackets
// (name[a][b]=v) and arrays index them (name[a][0]=v), as the APIs that
// take nested form values (Stripe, Rails, PHP) read them. Null members and
// empty arrays and objects are left out.
func appendDeep(b, name []byte, v value, esc escaper) []byte {
	switch {
	case v.kind == kindNull:
		return b
	case v.scalar():
		if len(b) > 0 {
			b = append(b, '&')
		}
		b = append(b, name...)
		b = append(b, '=')
		return esc(b, v.text)
	}
	for i, it := range v.items {
		key := append(append(make([]byte, 0, len(name)+16), name...), "%5B"...)
		if v.kind == kindObject {
			key = escapeUnreserved(key, v.keys[i])
		} else {
			key = strconv.AppendInt(key, int64(i), 10)
		}
		b = appendDeep(b, append(key, "%5D"...), it, esc)
	}
	return b
}

// setHeaderParam sets p's value, simple style and not percent-encoded, as
// a header. A value a header cannot carry (a line break, a control
// character) is refused.
func setHeaderParam(h http.Header, p *Param, v value) error {
	text := string(opSimple.expand(nil, p.Name, v, p.Explode, escapeNone))
	if text == "" && !v.scalar() {
		return nil
	}
	if err := checkHeader(p.Name, text); err != nil {
		return fmt.Errorf("%s: %w", p.where(), err)
	}
	h.Add(p.Name, text)
	return nil
}

// appendCookieParam appends p's value, form style, to a Cookie header's
// pairs ("name=value; ...").
func appendCookieParam(b []byte, p *Param, v value) []byte {
	if !v.scalar() && len(v.items) == 0 {
		return b
	}
	if len(b) > 0 {
		b = append(b, "; "...)
	}
	return opCookie.expand(b, p.Name, v, p.Explode, escapeUnreserved)
}

// checkHeader refuses a header name that is not an HTTP token, or a value
// with a line break or other control character (but tab); and it refuses
// Accept-Encoding, from a program (request's headers, an operation's
// header parameter) as from the configuration: an answer in an encoding
// the program asked for is not decoded (net/http decodes only what it
// asked for itself), and a credential echoed in a compressed answer would
// pass the scrubber.
func checkHeader(name, val string) error {
	if name == "" {
		return fmt.Errorf("empty header name")
	}
	if strings.EqualFold(name, "Accept-Encoding") {
		return errors.New("Accept-Encoding cannot be set: the connector reads every answer to keep its credentials out of what it returns, and it cannot read a compressed one")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return fmt.Errorf("header name %q is not a valid HTTP token", name)
		}
	}
	for i := 0; i < len(val); i++ {
		if c := val[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("header %s: the value holds a control character (%q), which a header cannot carry", name, c)
		}
	}
	return nil
}

// sameName reports whether a server may take a and b for the same name of
// a query parameter, cookie or header: names are compared ignoring case
// and percent-encoding, with '-', '_', '.' and ' ' taken for one another
// (CGI and its heirs read a header X_Api_Key as X-Api-Key, PHP a
// parameter a.b as a_b).
func sameName(a, b string) bool { return foldName(a) == foldName(b) }

// foldName is the form of a name that sameName compares.
func foldName(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		s = u
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("_. ", r) {
			return '-'
		}
		return unicode.ToLower(r)
	}, strings.TrimSpace(s))
}

// pairNamed returns the name of the first of pairs ("a=1&b=2", "a=1;
// b=2"; split at any byte of seps) that a server may take for one of
// names, "" when none is.
func pairNamed(pairs, seps string, names []string) string {
	for _, pair := range strings.FieldsFunc(pairs, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		name, _, _ := strings.Cut(pair, "=")
		if slices.ContainsFunc(names, func(n string) bool { return sameName(name, n) }) {
			return strings.TrimSpace(name)
		}
	}
	return ""
}

// reservedHeader says why a program cannot set the header name (request's
// headers, an operation's header parameter), "" when it can. Names are
// compared as a server may read them (sameName).
func reservedHeader(name string) string {
	switch foldName(name) {
	case "host", "content-length", "transfer-encoding", "trailer":
		return "a program cannot set it: the HTTP client writes it from the request"
	case "connection", "keep-alive", "proxy-connection", "te", "upgrade":
		return "a program cannot set a hop-by-hop header: a proxy on the way would drop the headers it names (the credential's too), or switch protocols"
	case "proxy-authorization":
		return "a program cannot send a proxy credential"
	case "x-http-method-override", "x-http-method", "x-method-override":
		// A GET that a server takes for a DELETE would need no approval.
		return "a program cannot override the request's method (many servers take this header for it): its approval is decided by the method it names"
	}
	return ""
}
