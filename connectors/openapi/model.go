package openapi

import (
	"encoding/json"
)

// An Operation is one method derived from an OpenAPI operation: what the
// sandbox sees of it (its Tool) and how a call of it becomes an HTTP
// request. Operations are built by derive and kept in the derivation cache,
// so every field is exported and plain data.
type Operation struct {
	// SourceName is the operationId, or "METHOD /path" without one; it is
	// the Tool's SourceName and what Call receives.
	SourceName string
	// Method is the upper-case HTTP method.
	Method string
	// Path is the path template as the document writes it
	// ("/repos/{owner}/{repo}").
	Path string
	// Server is the base URL for this operation when its path item or the
	// operation itself declares servers (a template, variables already
	// replaced by their defaults; possibly relative); "" means the
	// connector's base URL.
	Server string
	// Params are the parameters in the order they were declared (path-level
	// ones first), each under its own property of the input object.
	Params []Param
	// Body is the request body, nil when the operation takes none.
	Body *Body
	// Tags are the operation's tags (for `tag:NAME` filters).
	Tags []string
}

// Parameter locations.
const (
	InPath   = "path"
	InQuery  = "query"
	InHeader = "header"
	InCookie = "cookie"
)

// Parameter styles (OpenAPI 3 `style`), plus StyleTab for Swagger 2.0's
// collectionFormat: tsv, which OpenAPI 3 has no style for.
const (
	StyleSimple         = "simple"
	StyleLabel          = "label"
	StyleMatrix         = "matrix"
	StyleForm           = "form"
	StyleSpaceDelimited = "spaceDelimited"
	StylePipeDelimited  = "pipeDelimited"
	StyleDeepObject     = "deepObject"
	StyleTab            = "x-tabDelimited"
)

// A Param is one parameter of an operation.
type Param struct {
	// Name is the parameter's name on the wire (the path template's
	// variable, the query key, the header or cookie name).
	Name string
	// Prop is the property of the method's input object that carries it:
	// Name, unless two parameters share a name (see derive).
	Prop string
	// In is InPath, InQuery, InHeader or InCookie.
	In       string
	Required bool
	// Style and Explode say how an array or object value is serialised
	// (OpenAPI 3 defaults applied: simple for path and header, form for
	// query and cookie; explode true for form).
	Style   string
	Explode bool
	// AllowReserved leaves RFC 3986 reserved characters of a query value
	// unencoded.
	AllowReserved bool
	// MultiSegment lets a path parameter hold several segments: its '/'
	// are sent as they are, each segment encoded (GitHub's
	// x-multi-segment, and allowReserved on a path parameter).
	MultiSegment bool
	// JSON: the parameter is declared with `content: application/json`;
	// its value is sent as JSON text.
	JSON bool
}

// A Body is an operation's request body, under the input's Prop.
type Body struct {
	// Prop is the input property carrying the body ("body" unless a
	// parameter already has that name).
	Prop string
	// MediaType is the content type sent, chosen from the document's
	// (JSON first, then form, multipart, text, binary).
	MediaType string
	Required  bool
	// Files lists the top-level properties of a multipart body that are
	// files (format binary or base64, Swagger 2.0 type file): each is sent
	// as a file part.
	Files []string
	// Encoding maps a multipart or form property to the content type the
	// document sets for it (OpenAPI 3 `encoding.*.contentType`).
	Encoding map[string]string
}

// Binary is how a binary response body reaches the program, and how a
// program may pass binary content to a file part or an octet-stream body.
type Binary struct {
	MediaType string `json:"mediaType,omitempty"`
	// Base64 is the content, standard base64 with padding.
	Base64 string `json:"base64"`
	// Filename names a file part of a multipart body.
	Filename string `json:"filename,omitempty"`
}

// HTTPError is the detail of a call that got a non-2xx answer; it is the
// Result's Value, so the program's Error has status and body properties.
type HTTPError struct {
	Status int `json:"status"`
	// Body is the answer decoded by its content type, as a successful
	// result would be.
	Body json.RawMessage `json:"body,omitempty"`
}
