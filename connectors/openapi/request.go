package openapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/origin"
)

// requestMethods are the methods request accepts.
var requestMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}

// requestFields are the members of request's argument.
var requestFields = []string{"method", "path", "query", "headers", "body"}

// requestAnswer is what request returns to the program, whatever the
// status.
type requestAnswer struct {
	Status int `json:"status"`
	// Headers are the response's headers, names lower-case, the values
	// of a repeated header joined with ", ".
	Headers map[string]string `json:"headers"`
	// Body is the body decoded by its content type (decodeBody).
	Body json.RawMessage `json:"body"`
}

// request is the escape hatch request({method, path, query?, headers?,
// body?}): an HTTP request with the connector's base URL, headers and
// credentials.
//   - method: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS or TRACE (any
//     case);
//   - path: a path appended to the base URL's ("/repos/o/r/issues", a
//     query allowed), or an absolute URL with the base URL's scheme, host
//     and port under its path (a Link header's next page); any other URL
//     is refused, and so are "." and ".." segments, however encoded (see
//     dotSegment);
//   - query: values strings, numbers, booleans, or arrays of them (the key
//     repeated); null leaves a key out;
//   - headers: string (number, boolean) values; the connector's headers and
//     credentials win over them (sameName), and reservedHeader's are
//     refused;
//   - body: sent as JSON, unless headers set Content-Type: then a string is
//     sent as it is, and other values are encoded for that media type as
//     an operation's body is (form, multipart, binary).
//
// Any answer, whatever its status, is a Result whose Value is a
// requestAnswer, so programs can paginate and handle errors themselves.
// Bad arguments, and a body over the size cap, are an IsError Result
// naming the bad field; a transport failure is err. Everything returned is
// scrubbed, response headers included.
func (c *caller) request(ctx context.Context, tg *target) (connectors.Result, error) {
	req, err := c.prepareRequest(tg)
	if err != nil {
		return c.failed("request: " + err.Error()), nil
	}
	return c.exchange(ctx, "request "+req.Method, req, func(a *answer) connectors.Result {
		ans := requestAnswer{Status: a.status, Headers: make(map[string]string, len(a.header)), Body: decodeBody(req.Method, a)}
		for k, vs := range a.header {
			ans.Headers[strings.ToLower(k)] = strings.Join(vs, ", ")
		}
		return connectors.Result{Value: marshal(ans)}
	})
}

// prepareRequest validates the rest of request's argument (parseRequest
// read its method and path) and builds its request. Errors name the bad
// field.
func (c *caller) prepareRequest(tg *target) (*http.Request, error) {
	in := tg.in
	header, query := http.Header{}, tg.query
	if q := in.at("query"); q.kind != kindNull {
		if q.kind != kindObject {
			return nil, fmt.Errorf("query: must be an object, not %s", kindName(q.kind))
		}
		for i, k := range q.keys {
			v := q.items[i]
			if ok := v.kind == kindNull || v.scalar() || v.kind == kindArray && !slices.ContainsFunc(v.items, func(it value) bool { return !it.scalar() }); !ok {
				return nil, fmt.Errorf("query.%s: must be a string, number, boolean or an array of them, not %s", k, kindName(v.kind))
			}
			if v.kind != kindNull {
				query = appendQueryParam(query, &Param{Name: k, Style: StyleForm, Explode: true}, v)
			}
		}
	}
	u := c.base.Scheme + "://" + c.base.Host + tg.path
	if len(query) > 0 {
		u += "?" + string(query)
	}
	if h := in.at("headers"); h.kind != kindNull {
		if h.kind != kindObject {
			return nil, fmt.Errorf("headers: must be an object, not %s", kindName(h.kind))
		}
		for i, k := range h.keys {
			v := h.items[i]
			switch {
			case v.kind == kindNull:
				continue
			case !v.scalar():
				return nil, fmt.Errorf("headers.%s: must be a string, not %s", k, kindName(v.kind))
			}
			if err := checkHeader(k, v.text); err != nil {
				return nil, fmt.Errorf("headers.%s: %w", k, err)
			}
			if why := reservedHeader(k); why != "" {
				return nil, fmt.Errorf("headers.%s: %s", k, why)
			}
			header.Add(k, v.text)
		}
	}
	var body *encodedBody
	if b := in.at("body"); b.kind != kindNull {
		ct := header.Get("Content-Type")
		var err error
		enc := encodedBody{data: []byte(b.text), contentType: ct} // a string sent as it is
		if ct == "" || b.kind != kindString {
			enc, err = encodeBody(&Body{MediaType: cmp.Or(ct, "application/json")}, b)
		}
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		body = &enc
	}
	return c.newRequest(tg.method, u, header, nil, body)
}

// A target is a call of request's argument and where the call goes.
type target struct {
	in     value
	method string
	// path is the path, encoded, the base URL's path included; rel is
	// what follows the base URL's path.
	path, rel string
	// query is the query, encoded (the base URL's first).
	query []byte
}

// parseRequest reads request's argument, an object of requestFields, and
// its method and path, which it resolves against base (requestURL; not
// when base is nil). Errors name the bad field.
func parseRequest(args json.RawMessage, base *url.URL) (*target, error) {
	in, err := parseValue(args)
	if err != nil {
		return nil, err
	}
	if in.kind != kindObject {
		return nil, fmt.Errorf("the argument must be an object {method, path, query?, headers?, body?}, not %s", kindName(in.kind))
	}
	for _, k := range in.keys {
		if !slices.Contains(requestFields, k) {
			return nil, fmt.Errorf("unknown field %q (the fields are method, path, query, headers, body)", k)
		}
	}
	m := in.at("method")
	if m.kind != kindString {
		return nil, fmt.Errorf("method: required, a string (one of %s)", strings.Join(requestMethods, ", "))
	}
	t := &target{in: in, method: strings.ToUpper(m.text)}
	if !slices.Contains(requestMethods, t.method) {
		return nil, fmt.Errorf("method: %q is not one of %s", oneLine(m.text), strings.Join(requestMethods, ", "))
	}
	p := in.at("path")
	if p.kind != kindString || p.text == "" {
		return nil, errors.New(`path: required, a non-empty string ("/repos/o/r", or an absolute URL under the base URL)`)
	}
	if base == nil {
		return t, nil
	}
	if t.rel, t.query, err = requestURL(base, p.text); err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	t.path = strings.TrimSuffix(base.EscapedPath(), "/") + t.rel
	return t, nil
}

// requestURL resolves request's path: relative, it is appended to the base
// URL's path (its query after the base's); absolute, it must have the base
// URL's scheme, host and port, and be under its path. It returns the path
// that follows the base URL's (starting with '/', or empty), and the
// query, both encoded. "." and ".." segments are refused.
func requestURL(base *url.URL, path string) (string, []byte, error) {
	ref, err := url.Parse(path)
	if err != nil {
		return "", nil, fmt.Errorf("not a URL or path: %w", errors.Unwrap(err))
	}
	if ref.User != nil {
		return "", nil, errors.New("a URL with user information is not allowed")
	}
	p := ref.EscapedPath()
	if s := dotSegment(p); s != "" {
		return "", nil, fmt.Errorf("%q has a %q segment, which is not allowed", oneLine(path), s)
	}
	if ref.Scheme != "" || ref.Host != "" {
		if ref.Scheme == "" || !origin.Same(ref, base) {
			return "", nil, fmt.Errorf("%q is not on the base URL's scheme, host and port (%s://%s); give a path relative to the base URL, or an absolute URL on it", oneLine(path), base.Scheme, base.Host)
		}
		bp := strings.TrimSuffix(base.EscapedPath(), "/")
		if bp != "" && p != bp && !strings.HasPrefix(p, bp+"/") {
			return "", nil, fmt.Errorf("%q is not under the base URL's path (%s); give a path relative to the base URL, or an absolute URL under it", oneLine(path), bp)
		}
		return p[len(bp):], []byte(ref.RawQuery), nil
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p, []byte(joinQuery(base.RawQuery, ref.RawQuery)), nil
}
