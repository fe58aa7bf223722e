package openapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// maxMessage bounds the API's own message quoted in an error.
const maxMessage = 300

// An answer is an HTTP response read whole.
type answer struct {
	status int
	// reason is the status line's text ("Not Found"), or the standard
	// one when the server sent none.
	reason string
	header http.Header
	body   []byte
}

// errTooLarge reports a response body over the connector's cap.
var errTooLarge = errors.New("response body too large")

// readAnswer reads resp whole, at most limit bytes of body: a longer body
// (by its Content-Length, or once limit+1 bytes arrived) is not read
// further and fails with errTooLarge. The body is closed.
func readAnswer(resp *http.Response, limit int64) (*answer, error) {
	defer resp.Body.Close()
	a := &answer{status: resp.StatusCode, header: resp.Header, reason: http.StatusText(resp.StatusCode)}
	if _, text, ok := strings.Cut(resp.Status, " "); ok && text != "" {
		a.reason = text
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %d bytes announced, over the limit of %d bytes", errTooLarge, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read the response body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: over the limit of %d bytes", errTooLarge, limit)
	}
	a.body = body
	return a, nil
}

// decodeBody returns a response body as the program gets it, by its
// Content-Type:
//   - JSON (application/json, */*+json): the value; invalid JSON, its text;
//   - text/*, XML, YAML, form-urlencoded: the text as a string;
//   - an empty body (and any answer to HEAD, 204, 205, 304): null;
//   - no Content-Type: the value if the body is JSON, else the text if it
//     is UTF-8, else binary;
//   - anything else: a Binary {mediaType, base64}.
func decodeBody(method string, a *answer) json.RawMessage {
	if len(a.body) == 0 || method == http.MethodHead || a.status == http.StatusNoContent ||
		a.status == http.StatusResetContent || a.status == http.StatusNotModified {
		return json.RawMessage("null")
	}
	ct := a.header.Get("Content-Type")
	class := classify(ct)
	if ct == "" || class == classJSON {
		if v, ok := jsonValue(a.body); ok {
			return v
		}
	}
	if class == classJSON || class == classText || class == classForm || ct == "" && utf8.Valid(a.body) {
		return marshal(string(a.body)) // invalid UTF-8 becomes U+FFFD
	}
	mt := bareMediaType(ct)
	if ct == "" {
		mt = http.DetectContentType(a.body)
	}
	return marshal(Binary{MediaType: mt, Base64: base64.StdEncoding.EncodeToString(a.body)})
}

// jsonValue returns body compacted when it is one JSON value (a leading
// byte order mark ignored).
func jsonValue(body []byte) (json.RawMessage, bool) {
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// marshal returns v as JSON, HTML characters unescaped. v is one of this
// package's result types, which always marshal.
func marshal(v any) json.RawMessage {
	b, _ := jsontext.Marshal(v)
	return b
}

// apiMessage finds the API's own message in a decoded error body: a text
// body, or a string where APIs commonly put their message in a JSON one
// (most specific first: message, error.message, error_description, error,
// detail, title, errors[0].message, errors[0]); "" when there is none. It
// is as the API wrote it (bounded by the body's size cap): the caller
// scrubs it, then cuts it to one line (oneLine). Only those members are
// decoded (encoding/json skips the rest without building them): parsed
// whole, an error body of "[0,0,…]" took 40 times its size.
func apiMessage(body json.RawMessage) string {
	if text, ok := messageText(body); ok {
		return text
	}
	type withMessage struct {
		Message json.RawMessage `json:"message"`
	}
	// A member of another type than its field's is left out, not the
	// others (json.UnmarshalTypeError).
	var b struct {
		withMessage
		Error            json.RawMessage    `json:"error"`
		ErrorDescription json.RawMessage    `json:"error_description"`
		Detail           json.RawMessage    `json:"detail"`
		Title            json.RawMessage    `json:"title"`
		Errors           [1]json.RawMessage `json:"errors"` // the first; the others are skipped
	}
	var inError, inErrors withMessage
	_ = json.Unmarshal(body, &b)
	_ = json.Unmarshal(b.Error, &inError)
	_ = json.Unmarshal(b.Errors[0], &inErrors)
	for _, m := range []json.RawMessage{b.Message, inError.Message, b.ErrorDescription, b.Error, b.Detail, b.Title, inErrors.Message, b.Errors[0]} {
		if text, ok := messageText(m); ok {
			return text
		}
	}
	return ""
}

// messageText is m's text when m is a JSON string not only of white space.
func messageText(m json.RawMessage) (string, bool) {
	var s string
	return s, json.Unmarshal(m, &s) == nil && strings.TrimSpace(s) != ""
}

// oneLine collapses white space and bounds s to maxMessage bytes (on a
// character boundary, an ellipsis marking the cut).
func oneLine(s string) string {
	return short.Clip(strings.Join(strings.Fields(s), " "), maxMessage)
}
