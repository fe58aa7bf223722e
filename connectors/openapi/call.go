package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/origin"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry/propagate"
)

// Bounds on what a call sends.
const (
	// maxRedirects is how many same-origin redirects a call follows.
	maxRedirects = 10
	// maxURL bounds a request's URL.
	maxURL = 64 << 10
	// maxHeaders bounds the total size of a request's headers.
	maxHeaders = 64 << 10
)

// defaultAccept is sent when neither the call nor the configuration sets
// Accept: JSON preferred, anything accepted.
const defaultAccept = "application/json, */*;q=0.5"

// A caller makes the HTTP requests of one OpenAPI connector: operations
// (call) and the generic request escape hatch (request), with the
// connector's base URL, headers and credentials. It is safe for concurrent
// use.
//
// Everything it returns (Result values and messages, errors) has been
// through the scrubber, which holds every configured secret and every
// token obtained.
type caller struct {
	base     *url.URL
	timeout  time.Duration
	maxBytes int64
	scrub    *scrub.Scrubber
	log      *slog.Logger
	client   *http.Client // through a directTransport
	oauth    *tokenSource // nil unless Auth is OAuth2
	sending
}

// newCaller builds a caller of cfg.BaseURL, which must be an absolute
// http(s) URL, sending snd (checkSending's of cfg).
func newCaller(cfg Config, snd *sending) (*caller, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, errors.New("base URL: not an absolute http(s) URL")
	}
	c := &caller{
		base:     base,
		sending:  *snd,
		timeout:  cmp.Or(max(cfg.CallTimeout, 0), DefaultCallTimeout),
		maxBytes: maxResponseBytes,
		scrub:    cmp.Or(cfg.Scrubber, scrub.New()),
		log:      cmp.Or(cfg.Logger, slog.Default()),
	}
	c.scrub.Add(c.secrets...)
	fallback := http.DefaultTransport.(*http.Transport).Clone()
	fallback.MaxResponseHeaderBytes = maxResponseHead
	c.client = &http.Client{Transport: newDirectTransport(fallback), CheckRedirect: c.checkRedirect}
	if cfg.Auth != nil && cfg.Auth.OAuth2 != nil {
		c.oauth = newTokenSource(cfg.Auth.OAuth2, c.timeout, c.scrub, c.log)
	}
	return c, nil
}

// close stops a token request under way and closes the caller's idle
// connections. Calls must have returned.
func (c *caller) close() {
	if c.oauth != nil {
		c.oauth.close()
	}
	c.client.CloseIdleConnections()
}

// checkRedirect follows a redirect only within the first request's scheme,
// host and port, and at most maxRedirects times; otherwise the 3xx answer
// is the answer. A followed redirect keeps the headers (Go's client copies
// them on a same-host redirect) and gets the query API key again, as the
// only value of its name: the pairs the API's Location has of that name
// (or of one a server may take for it, sameName) are left out.
func (c *caller) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects || !origin.Same(req.URL, via[0].URL) {
		return http.ErrUseLastResponse
	}
	if c.keyQuery != "" {
		pairs := slices.DeleteFunc(strings.Split(req.URL.RawQuery, "&"), func(p string) bool {
			return p == "" || pairNamed(p, ";", []string{c.keyName}) != ""
		})
		req.URL.RawQuery = joinQuery(strings.Join(pairs, "&"), c.keyQuery)
	}
	return nil
}

// joinQuery joins two encoded query strings.
func joinQuery(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "&" + b
}

// newRequest makes the request of a call to u (absolute, its path and
// query encoded), with the call's own header, cookies ("a=1; b=2") and
// body, bounded by checkSize; and with what the connector sends on every
// request: the query API key, its headers and credentials (over the
// call's), the cookies joined, and Accept when the call sets none. send
// adds the trace context and the OAuth 2.0 token.
func (c *caller) newRequest(method, u string, header http.Header, cookies []byte, body *encodedBody) (*http.Request, error) {
	if err := checkSize(u, header, cookies, body); err != nil {
		return nil, err
	}
	if c.keyQuery != "" {
		base, query, _ := strings.Cut(u, "?")
		if name := pairNamed(query, "&;", []string{c.keyName}); name != "" {
			return nil, fmt.Errorf("query parameter %s: the connector sends the configured API key under this name, and a program cannot send another value of it", short.Quote(name))
		}
		u = base + "?" + joinQuery(query, c.keyQuery)
	}
	var data io.Reader
	if body != nil {
		data = bytes.NewReader(body.data)
	}
	req, err := http.NewRequest(method, u, data)
	if err != nil {
		return nil, err
	}
	req.Header = header
	// What the configuration sends is the only value of its name (or of
	// one a server may take for it, sameName): a query parameter named
	// as the API key is refused (above), and so is a cookie named as the
	// API key or a configured cookie; the call's headers named as a
	// configured one are left out.
	for k := range header {
		for ck := range c.header {
			if sameName(k, ck) {
				delete(header, k)
			}
		}
	}
	// The call's cookies: its cookie parameters', then its Cookie header's.
	empty := func(s string) bool { return s == "" }
	own := slices.DeleteFunc(append([]string{string(cookies)}, header.Values("Cookie")...), empty)
	header.Del("Cookie")
	if name := pairNamed(strings.Join(own, ";"), ";", c.cookieNames); name != "" {
		return nil, fmt.Errorf("cookie %s: the configuration sends a cookie of this name (its API key, or its Cookie header), and a program cannot send another value of it", short.Quote(name))
	}
	for k, v := range c.header {
		header[k] = append([]string(nil), v...)
	}
	if body != nil {
		header.Set("Content-Type", body.contentType)
	}
	if header.Get("Accept") == "" {
		header.Set("Accept", defaultAccept)
	}
	// The call's cookies, the configured ones, the API key's.
	all := slices.DeleteFunc(append(own, header.Get("Cookie"), c.cookie), empty)
	if len(all) > 0 {
		header.Set("Cookie", strings.Join(all, "; "))
	}
	return req, nil
}

// send sends req (newRequest's) within ctx, with the call's trace context;
// it follows same-origin redirects (checkRedirect) and, when
// authenticating with OAuth 2.0, sends a token, and sends the request once
// more with a new token after a 401. It returns the answer, read up to the
// size cap (errTooLarge past it), or a transport error (not scrubbed).
func (c *caller) send(ctx context.Context, req *http.Request) (*answer, error) {
	req = req.WithContext(ctx)
	// The call's trace context, so the API's spans continue it; set on
	// the request, before any transport (the direct one included) sees it.
	propagate.SetHeader(ctx, req.Header)
	stale := ""
	for attempt := 0; ; attempt++ {
		if c.oauth != nil {
			token, err := c.oauth.token(ctx, stale)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+token)
			stale = token // if the API refuses it
		}
		resp, err := c.client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized || c.oauth == nil || attempt > 0 {
			return readAnswer(resp, c.maxBytes)
		}
		// The token may have been revoked or expired early: once more
		// with a new one, on a copy (the transport is done with req once
		// its body is closed, but need not be with its header).
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		req = req.Clone(ctx)
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// call makes the HTTP request of op with the program's arguments (a JSON
// object: one property per parameter, keyed by Param.Prop, and the body
// under Body.Prop) and returns what the program gets:
//   - a 2xx answer: Value is the body decoded by its content type
//     (decodeBody);
//   - any other answer (a 3xx not followed included): IsError, Message
//     "<status> <reason>: <the API's message> (METHOD /path/template)",
//     and Value the HTTPError {status, body};
//   - arguments that cannot be sent (a missing required parameter, a
//     value that would change the path, a body its media type cannot
//     carry), and a body over the size cap: IsError with a message that
//     names the input;
//   - a transport failure (no connection, the call timeout, a token
//     request that failed): err.
//
// Everything returned is scrubbed.
func (c *caller) call(ctx context.Context, op *Operation, args json.RawMessage) (connectors.Result, error) {
	what := op.Method + " " + op.Path
	req, err := c.prepare(op, args)
	if err != nil {
		return c.failed(fmt.Sprintf("%s: %v", what, err)), nil
	}
	return c.exchange(ctx, what, req, func(a *answer) connectors.Result {
		body := decodeBody(op.Method, a)
		if a.status/100 == 2 {
			return connectors.Result{Value: body}
		}
		// What the API wrote is scrubbed before it is cut: a cut through a
		// secret would leave its head unrecognised.
		msg := fmt.Sprintf("%d %s", a.status, a.reason)
		if loc := a.header.Get("Location"); a.status/100 == 3 && loc != "" {
			msg += ": redirect to " + oneLine(c.scrub.String(loc)) + " not followed (only redirects to the same scheme, host and port are)"
		} else if m := apiMessage(body); m != "" {
			msg += ": " + oneLine(c.scrub.String(m))
		}
		return connectors.Result{IsError: true, Message: msg + " (" + what + ")", Value: marshal(HTTPError{Status: a.status, Body: body})}
	})
}

// exchange sends req within the call timeout and returns the Result that
// answered makes of the answer, scrubbed; or, without an answer, an
// IsError Result for a body over the size cap, or the transport error,
// scrubbed. what names the call in messages and in the debug log (which
// never gets a URL or a value).
func (c *caller) exchange(ctx context.Context, what string, req *http.Request, answered func(*answer) connectors.Result) (connectors.Result, error) {
	start := time.Now()
	sendCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	a, err := c.send(sendCtx, req)
	if err != nil && ctx.Err() == nil && errors.Is(sendCtx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s (the call timeout): %w", c.timeout, sendCtx.Err())
	}
	switch {
	case errors.Is(err, errTooLarge):
		return c.failed(fmt.Sprintf("%s: %v", what, err)), nil
	case err != nil:
		err = c.scrub.Error(fmt.Errorf("%s: %w", what, err))
		c.log.Debug("openapi call failed", "call", what, "err", err, "duration", time.Since(start))
		return connectors.Result{}, err
	}
	c.log.Debug("openapi call", "call", what, "status", a.status, "duration", time.Since(start))
	res := answered(a)
	res.Value = c.scrub.JSON(res.Value)
	res.Message = c.scrub.String(res.Message)
	return res, nil
}

// failed is the Result of a call refused or failed before an answer the
// program can use.
func (c *caller) failed(msg string) connectors.Result {
	return connectors.Result{IsError: true, Message: c.scrub.String(msg)}
}

// prepare builds the request of op from the arguments: the
// server (Operation.Server resolved against the base, or the base), the
// path expanded, the query, header and cookie parameters serialised in
// the order they are declared, and the body encoded. Null and absent
// optional parameters are left out.
func (c *caller) prepare(op *Operation, args json.RawMessage) (*http.Request, error) {
	in, err := inputObject(args)
	if err != nil {
		return nil, err
	}
	base := c.base
	if op.Server != "" {
		ref, err := url.Parse(op.Server)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", op.Server, err)
		}
		base = c.base.ResolveReference(ref)
	}
	b := make([]byte, 0, 128)
	b = append(b, base.Scheme+"://"+base.Host...)
	b = append(b, strings.TrimSuffix(base.EscapedPath(), "/")...)
	if b, err = expandPath(b, op, &in); err != nil {
		return nil, err
	}
	header, query := http.Header{}, []byte(base.RawQuery)
	var cookies []byte
	for i := range op.Params {
		p := &op.Params[i]
		if p.In == InPath {
			continue
		}
		v, ok := paramValue(&in, p)
		if !ok {
			if p.Required {
				return nil, fmt.Errorf("%s is required", p.where())
			}
			continue
		}
		switch p.In {
		case InQuery:
			query = appendQueryParam(query, p, v)
		case InHeader:
			if err := setHeaderParam(header, p, v); err != nil {
				return nil, err
			}
		case InCookie:
			cookies = appendCookieParam(cookies, p, v)
		}
	}
	if len(query) > 0 {
		b = append(b, '?')
		b = append(b, query...)
	}
	var body *encodedBody
	if op.Body != nil {
		switch v := in.at(op.Body.Prop); {
		case v.kind != kindNull:
			enc, err := encodeBody(op.Body, v)
			if err != nil {
				return nil, fmt.Errorf("input %q (request body, %s): %w", op.Body.Prop, bareMediaType(op.Body.MediaType), err)
			}
			body = &enc
		case op.Body.Required:
			return nil, fmt.Errorf("input %q (request body) is required", op.Body.Prop)
		}
	}
	return c.newRequest(op.Method, string(b), header, cookies, body)
}

// inputObject parses a call's arguments: a JSON object (absent or null
// is an empty one).
func inputObject(args json.RawMessage) (value, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return value{kind: kindObject}, nil
	}
	// Each member is bounded as a value of its own (parseValue).
	in, ok := jsontext.Parse(args, maxValueDepth+1, valueBuilder{})
	switch {
	case !ok:
		return value{}, fmt.Errorf("the input is not a valid JSON object, or a value in it is nested deeper than %d levels", maxValueDepth)
	case in.kind == kindNull:
		return value{kind: kindObject}, nil
	case in.kind != kindObject:
		return value{}, errors.New("the input must be an object")
	}
	return in, nil
}

// checkSize bounds a call's URL, headers and body.
func checkSize(u string, header http.Header, cookies []byte, body *encodedBody) error {
	if len(u) > maxURL {
		return fmt.Errorf("the request URL would be %d bytes, over the limit of %d bytes", len(u), maxURL)
	}
	if body != nil && len(body.data) > maxRequestBody {
		return fmt.Errorf("the encoded body is %d bytes, over the limit of %d bytes", len(body.data), maxRequestBody)
	}
	n := len(cookies)
	for k, vs := range header {
		for _, v := range vs {
			n += len(k) + len(v)
		}
	}
	if n > maxHeaders {
		return fmt.Errorf("the request headers would be %d bytes, over the limit of %d bytes", n, maxHeaders)
	}
	return nil
}
