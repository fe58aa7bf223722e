package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// A derivation is everything derived from one document, before the
// connector's operation filter: it is what the derivation cache keeps.
type derivation struct {
	Title string
	// Server is the document's base URL: its first server with the
	// variables' defaults (Swagger 2.0: scheme, host and basePath); it may
	// be relative, or "" when the document names none.
	Server string
	// Methods are the operations in document order (paths in order; in a
	// path, get, put, post, delete, options, head, patch, trace); the
	// connector names them (methodName).
	Methods []derivedMethod
	// Defs are the shared schemas any method refers to, converted, by name;
	// DefRefs the shared schemas each refers to.
	Defs    map[string]json.RawMessage
	DefRefs map[string][]string
	// Warnings are the document's problems that did not stop derivation.
	Warnings []string
}

// A derivedMethod is one operation and its tool.
type derivedMethod struct {
	Op   Operation
	Tool connectors.Tool
	// Refs are the shared schemas its input and output refer to.
	Refs []string
}

// httpMethods are the operations of a path item, in the order methods are
// derived.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// maxWarnings bounds the warnings kept of one document; one more line
// counts those left out.
const maxWarnings = 100

// maxDescription bounds a method's description (summary and description).
const maxDescription = 1200

// A method's name, route and tags come from its operationId, path and
// tags, which nothing else bounds but the document's size: a megabyte
// operationId would be a megabyte name in every declaration, search result
// and warning. Longer ones are ignored with a warning (the longest of the
// APIs.guru directory are under a hundred bytes).
const (
	maxName = 256 // an operationId or a tag
	maxPath = 1024
	// maxTags bounds an operation's tags, for the same reason (each is in
	// the method's search document and matched by tag: filters); the
	// directory's operations have a few.
	maxTags = 64
)

// The derived methods (their schemas, descriptions and tags) are bounded
// by the document's size: a schema copied where it is used (one a
// reference names in place, a shared response's or parameter's) costs its
// size once per use, and a path item a reference names costs its
// operations once per path, so a small document could otherwise derive
// gigabytes. Every document of the APIs.guru directory derives at most
// 2.5 times its size.
const (
	derivedPerByte  = 8
	minDerivedBytes = 16 << 20
)

// deriver holds the state of one derivation.
type deriver struct {
	// ctx is checked before each operation and each shared schema, and
	// once every checkEvery parameters and schemas within them (stopped):
	// a large document takes seconds to derive, one operation of a
	// million parameters too, and Close or a canceled start should not
	// wait for it.
	ctx      context.Context
	steps    int
	halted   bool
	root     *value
	swagger2 bool
	conv     *schemaConv
	// warned are the hashes of the warnings given, kept or counted: their
	// texts past the hundred kept would take up to 1.2 KB each.
	warned   map[uint64]bool
	warnings []string
	dropped  int
	// where prefixes warnings with the operation being derived.
	where string
}

// derive derives the methods of a parsed document of size bytes; it stops
// with ctx's error once ctx is done.
func derive(ctx context.Context, root *value, size int) (*derivation, error) {
	if !root.isObject() {
		return nil, errors.New("not an OpenAPI document: the top level is not an object")
	}
	d := &deriver{ctx: ctx, root: root, warned: map[uint64]bool{}}
	// A version is read as written, a number too (YAML's unquoted
	// "openapi: 3.1"), and quoted clipped: the document may be hostile.
	version := func(v *value) string {
		if v.scalar() {
			return short.Quote(v.text)
		}
		return "(" + kindName(v.kind) + ")"
	}
	switch v, sw := root.get("openapi"), root.get("swagger"); {
	case v != nil && v.kind != kindNull:
		if !v.scalar() || !strings.HasPrefix(v.text, "3.") {
			return nil, fmt.Errorf("unsupported OpenAPI version %s at /openapi (3.0, 3.1 and Swagger 2.0 are)", version(v))
		}
		comps := root.get("components").get("schemas")
		d.conv = &schemaConv{doc: root, components: comps, defsPtr: "/components/schemas/", oas31: !strings.HasPrefix(v.text, "3.0")}
	case sw != nil:
		if !sw.scalar() || sw.text != "2.0" {
			return nil, fmt.Errorf("unsupported Swagger version %s at /swagger (2.0 is)", version(sw))
		}
		d.swagger2 = true
		d.conv = &schemaConv{doc: root, components: root.get("definitions"), defsPtr: "/definitions/"}
	default:
		return nil, errors.New(`not an OpenAPI document: it has neither "openapi" nor "swagger"`)
	}
	d.conv.warn, d.conv.stopped = d.warn, d.stopped
	bound := minDerivedBytes + derivedPerByte*size
	d.conv.left = bound
	tooLarge := fmt.Errorf("the derived methods would be larger than %d MiB (%d times the document's size, %d MiB at least): its references copy large parts too often",
		bound>>20, derivedPerByte, minDerivedBytes>>20)
	out := &derivation{Defs: map[string]json.RawMessage{}, DefRefs: map[string][]string{}}
	out.Title = root.get("info").getText("title")
	out.Server = d.server(root)

	if paths := root.get("paths"); paths.isObject() {
		for i, p := range paths.keys {
			if len(p) > maxPath {
				d.where = ""
				d.warn(fmt.Sprintf("path %s is longer than %d bytes; skipped", short.Quote(p), maxPath))
				continue
			}
			// A "." or ".." segment, however encoded (dotSegment), sends
			// the calls to another path than the one the operation names:
			// past base_url's path, and past the path: globs of
			// operations.exclude and approve, which match the template.
			if s := dotSegment(p); s != "" {
				d.where = ""
				d.warn(fmt.Sprintf("path %s has a %q segment, which a server reads as another path; skipped", short.Quote(p), s))
				continue
			}
			out.Methods = append(out.Methods, d.pathItem(p, &paths.items[i])...)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if d.conv.left < 0 {
				return nil, tooLarge
			}
		}
	} else if paths != nil {
		d.warn("paths is not an object; no operations")
	}
	d.where = ""
	if len(out.Methods) == 0 {
		d.warn("the document has no operations")
	}
	// The shared schemas the methods refer to, and those they refer to.
	var refs []string
	for _, m := range out.Methods {
		refs = append(refs, m.Refs...)
	}
	reach(refs, func(name string) []string {
		if d.halted = d.halted || ctx.Err() != nil; d.halted {
			return nil
		}
		d.where = "schema " + name
		out.Defs[name] = d.conv.schema(nil, d.conv.shared(name), 0)
		out.DefRefs[name] = d.conv.takeRefs()
		d.conv.left -= len(out.Defs[name])
		return out.DefRefs[name]
	})
	if d.halted {
		return nil, ctx.Err()
	}
	if d.conv.left < 0 {
		return nil, tooLarge
	}
	if d.dropped > 0 {
		d.warnings = append(d.warnings, fmt.Sprintf("… and %d more warnings", d.dropped))
	}
	out.Warnings = d.warnings
	return out, nil
}

// reach calls visit once for each of names and each name a visit returns,
// and returns the names visited.
func reach(names []string, visit func(name string) []string) map[string]bool {
	seen := map[string]bool{}
	for len(names) > 0 {
		name := names[0]
		names = names[1:]
		if !seen[name] {
			seen[name] = true
			names = append(names, visit(name)...)
		}
	}
	return seen
}

// checkEvery is how many parameters and schemas stopped counts between
// two checks of the context.
const checkEvery = 1024

// stopped reports whether the derivation's context is done, checking it
// once every checkEvery calls (and for good once it is). The loops over
// one operation's parameters and the schema conversion call it per item,
// so a cancelation reaches inside an operation; derive returns the
// context's error after the operation, whatever it derived.
func (d *deriver) stopped() bool {
	if d.steps++; !d.halted && d.steps%checkEvery == 0 {
		d.halted = d.ctx.Err() != nil
	}
	return d.halted
}

// warnSeed seeds the hashes of warnings.
var warnSeed = maphash.MakeSeed()

// warn records a problem of the document, once, naming where it is.
func (d *deriver) warn(msg string) {
	// Bounded, where and all: a document can put many problems under one
	// long path, or one long name in many places.
	if d.where != "" {
		msg = short.Clip(d.where, maxMessage) + ": " + msg
	}
	msg = short.Clip(msg, 4*maxMessage)
	h := maphash.String(warnSeed, msg)
	if d.warned[h] {
		return
	}
	d.warned[h] = true
	if len(d.warnings) >= maxWarnings {
		d.dropped++
		return
	}
	d.warnings = append(d.warnings, msg)
}

// server returns the document's base URL.
func (d *deriver) server(root *value) string {
	if d.swagger2 {
		host := root.getText("host")
		base := root.getText("basePath")
		if host == "" {
			return base
		}
		scheme := "https"
		if ss := root.strings("schemes"); len(ss) > 0 && !slices.Contains(ss, "https") {
			scheme = ss[0]
		}
		return scheme + "://" + host + base
	}
	return d.serverURL(root.get("servers"))
}

// maxServerURL bounds a server URL, its variables replaced.
const maxServerURL = 8 << 10

// serverURL returns the URL of the first server of a servers list, its
// variables replaced by their defaults; "" when there is none. The URL is
// read once, so a default is not searched for variables: replaced
// variable after variable, each default bringing in the next, a few
// kilobytes made gigabytes.
func (d *deriver) serverURL(servers *value) string {
	if !servers.isArray() || len(servers.items) == 0 {
		return ""
	}
	s := &servers.items[0]
	u, vars := s.getText("url"), s.get("variables")
	var b strings.Builder
	for vars.isObject() && b.Len() <= maxServerURL {
		open := strings.IndexByte(u, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(u[open:], '}') + open
		if end < open {
			break
		}
		b.WriteString(u[:open])
		if def := vars.get(u[open+1 : end]).get("default"); def != nil && (def.kind == kindString || def.kind == kindNumber) {
			b.WriteString(def.text)
		} else {
			b.WriteString(u[open : end+1])
		}
		u = u[end+1:]
	}
	if b.WriteString(u); b.Len() > maxServerURL {
		d.warn(fmt.Sprintf("a server URL is longer than %d KiB with its variables' defaults; ignored", maxServerURL>>10))
		return ""
	}
	return b.String()
}

// pathItem derives the operations of one path.
func (d *deriver) pathItem(path string, item *value) []derivedMethod {
	d.where = path
	item = d.deref(item, "path item")
	if !item.isObject() {
		d.warn("not a path item object; skipped")
		return nil
	}
	var out []derivedMethod
	server := ""
	if !d.swagger2 {
		server = d.serverURL(item.get("servers"))
	}
	for _, m := range httpMethods {
		op := item.get(m)
		if op == nil || d.ctx.Err() != nil {
			continue
		}
		d.where = strings.ToUpper(m) + " " + path
		if !op.isObject() {
			d.warn("not an operation object; skipped")
			continue
		}
		out = append(out, d.operation(path, m, item, op, server))
	}
	return out
}

// deref follows a local $ref (up to a few in a row); what names the
// object in warnings ("" for none: a schema, whose conversion warns). It
// returns nil when the reference does not resolve.
func (d *deriver) deref(n *value, what string) *value {
	ref, local := "", true // the last reference followed
	for range 8 {
		r := n.get("$ref")
		if !r.isString() {
			return n
		}
		ref = r.text
		if local = strings.HasPrefix(ref, "#"); local {
			n = resolvePointer(d.root, ref[1:])
		}
		if !local || n == nil {
			break
		}
	}
	switch {
	case what == "":
	case !local:
		d.warn(fmt.Sprintf("unresolvable $ref %q of a %s: references to other documents are not loaded", ref, what))
	case n == nil:
		d.warn(fmt.Sprintf("unresolvable $ref %q of a %s", ref, what))
	default:
		d.warn(fmt.Sprintf("a %s's $ref chain is too long", what))
	}
	return nil
}

// param is a parameter being derived.
type param struct {
	p      Param
	value  *value // the parameter object (after $ref)
	schema []byte
}

// operation derives one operation.
func (d *deriver) operation(path, method string, item, op *value, server string) derivedMethod {
	o := Operation{
		SourceName: op.getText("operationId"),
		Method:     strings.ToUpper(method),
		Path:       path,
		Tags:       op.strings("tags"),
	}
	if len(o.SourceName) > maxName {
		d.warn(fmt.Sprintf("operationId %s is longer than %d bytes; ignored", short.Quote(o.SourceName), maxName))
		o.SourceName = ""
	}
	o.Tags = slices.DeleteFunc(o.Tags, func(tag string) bool {
		if len(tag) > maxName {
			d.warn(fmt.Sprintf("tag %s is longer than %d bytes; ignored", short.Quote(tag), maxName))
		}
		return len(tag) > maxName
	})
	if len(o.Tags) > maxTags {
		d.warn(fmt.Sprintf("%d tags; only the first %d are kept", len(o.Tags), maxTags))
		o.Tags = o.Tags[:maxTags:maxTags]
	}
	if o.SourceName == "" {
		o.SourceName = o.Method + " " + path
	}
	if !d.swagger2 {
		if s := d.serverURL(op.get("servers")); s != "" {
			server = s
		}
	}
	o.Server = server

	params, formFields, bodyParam := d.parameters(path, item, op)
	// Input properties: path parameters keep their names first, then
	// query, header and cookie ones; a name taken by another location
	// gets the location as a suffix.
	taken := map[string]bool{}
	for _, in := range []string{InPath, InQuery, InHeader, InCookie} {
		for i := range params {
			p := &params[i].p
			if p.In != in {
				continue
			}
			p.Prop = p.Name
			if taken[p.Prop] {
				p.Prop = p.Name + "_" + p.In
			}
			for k := 2; taken[p.Prop]; k++ {
				p.Prop = p.Name + "_" + p.In + strconv.Itoa(k)
			}
			taken[p.Prop] = true
		}
	}

	body, bodySchema := d.requestBody(op, formFields, bodyParam)
	if body != nil {
		body.Prop = "body"
		for _, alt := range []string{"requestBody", "body_"} {
			if !taken[body.Prop] {
				break
			}
			body.Prop = alt
		}
		o.Body = body
	}

	var props obj
	var required []string
	for _, p := range params {
		o.Params = append(o.Params, p.p)
		props.raw(p.p.Prop, p.schema)
		if p.p.Required {
			required = append(required, p.p.Prop)
		}
	}
	if body != nil {
		props.raw(body.Prop, bodySchema)
		if body.Required {
			required = append(required, body.Prop)
		}
	}
	input := objectSchema("", &props, required, true)
	output := d.output(op)
	refs := d.conv.takeRefs()

	tool := connectors.Tool{
		SourceName:   o.SourceName,
		Description:  description(op, o.Method, path),
		InputSchema:  input,
		OutputSchema: output,
		Deprecated:   op.getBool("deprecated", false),
	}
	// The description and tags count with the schemas: a path item a
	// thousand paths refer to is a thousand copies of its operations.
	d.conv.left -= len(input) + len(output) + len(tool.Description)
	for _, tag := range o.Tags {
		d.conv.left -= len(tag)
	}
	return derivedMethod{Op: o, Tool: tool, Refs: refs}
}

// setHTTPHints sets a tool's annotations and approval default from its
// HTTP method: GET, HEAD, OPTIONS and TRACE are safe (read-only, no
// approval); POST, PUT, PATCH and DELETE need approval; PUT, PATCH and
// DELETE may destroy; GET, HEAD, OPTIONS, TRACE, PUT and DELETE are
// idempotent.
func setHTTPHints(t *connectors.Tool, method string) {
	safe := isSafeMethod(method)
	destructive := method == "PUT" || method == "PATCH" || method == "DELETE"
	idempotent := safe || method == "PUT" || method == "DELETE"
	open := true
	t.Annotations = connectors.Annotations{ReadOnly: &safe, Destructive: &destructive, Idempotent: &idempotent, OpenWorld: &open}
	t.RequiresApproval = !safe
}

// isSafeMethod reports whether an HTTP method (upper case) is safe (RFC
// 9110 §9.2.1).
func isSafeMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// description is a method's description: summary, description (bounded)
// and the HTTP method and path.
func description(op *value, method, path string) string {
	summary := strings.TrimSpace(op.getText("summary"))
	text := summary
	if desc := strings.TrimSpace(op.getText("description")); desc != "" && desc != summary {
		text = strings.TrimPrefix(summary+"\n\n"+desc, "\n\n") // a paragraph each
	}
	if len(text) > maxDescription {
		cut := strings.LastIndexAny(text[:maxDescription], " \n")
		if cut < maxDescription/2 {
			cut = maxDescription
		}
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + " …"
	}
	return strings.TrimPrefix(text+"\n\n"+method+" "+path, "\n\n")
}

// templateVar matches the variables of a path template.
var templateVar = regexp.MustCompile(`\{([^{}/]+)\}`)

// parameters collects the parameters of an operation, the path item's
// first (the operation's replace those with the same name and location),
// and, for Swagger 2.0, its formData parameters and body parameter apart.
func (d *deriver) parameters(path string, item, op *value) (params []param, form []param, body *value) {
	var all []*value
	at := map[[2]string]int{} // position in all by name and location
	for _, list := range []*value{item.get("parameters"), op.get("parameters")} {
		if list == nil {
			continue
		}
		if !list.isArray() {
			d.warn("parameters is not a list; ignored")
			continue
		}
		for i := range list.items {
			if d.stopped() {
				return nil, nil, nil
			}
			pn := d.deref(&list.items[i], "parameter")
			if !pn.isObject() {
				continue
			}
			name, in := pn.getText("name"), pn.getText("in")
			if name == "" || in == "" {
				d.warn("a parameter without name or in; ignored")
				continue
			}
			if j, ok := at[[2]string{name, in}]; ok {
				all[j] = pn
				continue
			}
			at[[2]string{name, in}] = len(all)
			all = append(all, pn)
		}
	}
	vars := map[string]bool{}
	template := templateVar.FindAllStringSubmatch(path, -1)
	for _, m := range template {
		vars[m[1]] = true
	}
	for _, pn := range all {
		if d.stopped() {
			return nil, nil, nil
		}
		name, in := pn.getText("name"), pn.getText("in")
		switch {
		case in == "body" && d.swagger2:
			body = pn
		case in == "formData" && d.swagger2:
			form = append(form, d.param(pn, InQuery))
		case in == InPath && !vars[name]:
			d.warn(fmt.Sprintf("path parameter %q is not in the path; ignored", name))
		case in == InHeader && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(name)):
			// OpenAPI 3: these header parameters are ignored; the
			// connector sets them.
		case in == InHeader && (foldName(name) == "cookie" || reservedHeader(name) != ""):
			why := cmp.Or(reservedHeader(name), "a program cannot set it: cookies are cookie parameters")
			d.warn(fmt.Sprintf("header parameter %s: %s; ignored", short.Quote(name), why))
		case in == InPath || in == InQuery || in == InHeader || in == InCookie:
			if in == InPath {
				delete(vars, name)
			}
			params = append(params, d.param(pn, in))
		default:
			d.warn(fmt.Sprintf("parameter %q has an unknown location %q; ignored", name, in))
		}
	}
	// Template variables nobody declared: required strings, in path order.
	for _, m := range template {
		if vars[m[1]] {
			d.warn(fmt.Sprintf("path parameter %q is not declared; taken as a required string", m[1]))
			params = append(params, param{
				p:      Param{Name: m[1], In: InPath, Required: true, Style: StyleSimple},
				schema: []byte(`{"type":"string"}`),
			})
			delete(vars, m[1])
		}
	}
	return params, form, body
}

// param derives one parameter (in is its location; formData parameters
// are read as query ones).
func (d *deriver) param(pn *value, in string) param {
	p := Param{
		Name:     pn.getText("name"),
		In:       in,
		Required: pn.getBool("required", false) || in == InPath,
	}
	var schema []byte
	if d.swagger2 {
		p.Style, p.Explode = collectionFormat(pn.getText("collectionFormat"), in)
		// A Swagger 2.0 parameter carries its schema keywords itself.
		schema = d.conv.schema(nil, pn, 0)
	} else {
		def, _ := collectionFormat("", in) // the location's default style
		p.Style = cmp.Or(pn.getText("style"), def)
		p.Explode = pn.getBool("explode", p.Style == StyleForm)
		p.AllowReserved = pn.getBool("allowReserved", false)
		sn := pn.get("schema")
		if c := pn.get("content"); sn == nil && c.isObject() && len(c.keys) > 0 {
			mt := chooseMedia(c.keys)
			sn = c.get(mt).get("schema")
			p.JSON = classify(mt) == classJSON
		}
		schema = d.conv.schema(nil, sn, 0)
	}
	p.MultiSegment = in == InPath && (pn.getBool("x-multi-segment", false) || pn.getBool("allowReserved", false))
	schema = withDescription(schema, pn)
	if pn.getBool("deprecated", false) {
		schema = withMember(schema, "deprecated", []byte("true"))
	}
	return param{p: p, value: pn, schema: schema}
}

// withDescription adds a parameter's description to its schema when the
// schema has none of its own.
func withDescription(schema []byte, pn *value) []byte {
	desc := pn.getText("description")
	if desc == "" {
		return schema
	}
	if top, _ := parseJSON(schema); top.get("description") != nil {
		return schema
	}
	return withMember(schema, "description", appendString(nil, desc))
}

// withMember adds a member to a schema that is a JSON object (a boolean
// schema is returned as it is).
func withMember(schema []byte, key string, value []byte) []byte {
	if len(schema) < 2 || schema[0] != '{' {
		return schema
	}
	o := obj{b: make([]byte, 0, len(schema)+len(key)+len(value)+4)}
	o.raw(key, value)
	if string(schema) == "{}" {
		return o.done()
	}
	return append(append(o.b, ','), schema[1:]...)
}

var collectionStyles = map[string]string{"ssv": StyleSpaceDelimited, "pipes": StylePipeDelimited, "tsv": StyleTab}

// collectionFormat maps Swagger 2.0's collectionFormat to a style and
// explode (csv is the default: a location's default style).
func collectionFormat(cf, in string) (string, bool) {
	switch s, ok := collectionStyles[cf]; {
	case cf == "multi":
		return StyleForm, true
	case ok:
		return s, false
	case in == InPath || in == InHeader:
		return StyleSimple, false
	}
	return StyleForm, false
}

// mediaRank orders request and response media types: JSON first, then
// forms, text, binary, anything else.
func mediaRank(mt string) int {
	switch l := bareMediaType(mt); {
	case l == "application/json":
		return 0
	case classify(l) == classJSON:
		return 1
	case wildcard(l):
		return 2
	case l == "application/x-www-form-urlencoded":
		return 3
	case l == "multipart/form-data":
		return 4
	case l == "text/plain":
		return 5
	case strings.HasPrefix(l, "text/"):
		return 6
	case l == "application/octet-stream":
		return 7
	}
	return 8
}

// wildcard reports whether a media type is */* or application/*, which
// an answer of any type (JSON first) may stand for.
func wildcard(mt string) bool { l := bareMediaType(mt); return l == "*/*" || l == "application/*" }

// chooseMedia picks the media type to use among a content map's keys.
func chooseMedia(types []string) string {
	best := ""
	for _, t := range types {
		if best == "" || mediaRank(t) < mediaRank(best) {
			best = t
		}
	}
	return best
}

// binarySchema is the schema of a binary answer (a Binary without
// filename).
const binarySchema = `{"type":"object","properties":{"mediaType":{"type":"string"},"base64":{"type":"string","description":"The content, base64-encoded."}},"required":["mediaType","base64"]}`

// fileSchema is the schema of a file or binary body a program passes: its
// text, or a Binary.
const fileSchema = `{"anyOf":[{"type":"string","description":"The content as text."},` +
	`{"type":"object","properties":{"base64":{"type":"string","description":"The content, base64-encoded."},"filename":{"type":"string"},"mediaType":{"type":"string"}},"required":["base64"]}]}`

// requestBody derives the request body: OpenAPI 3's requestBody, or
// Swagger 2.0's body or formData parameters. It returns nil when the
// operation takes none.
func (d *deriver) requestBody(op *value, form []param, bodyParam *value) (*Body, []byte) {
	if d.swagger2 {
		consumes := op.strings("consumes")
		if consumes == nil {
			consumes = d.root.strings("consumes")
		}
		switch {
		case bodyParam != nil:
			b := &Body{MediaType: cmp.Or(chooseMedia(consumes), "application/json"), Required: bodyParam.getBool("required", false)}
			return b, withDescription(d.bodySchema(b, bodyParam.get("schema")), bodyParam)
		case len(form) > 0:
			return d.formBody(form, consumes)
		}
		return nil, nil
	}
	rb := op.get("requestBody")
	if rb == nil {
		return nil, nil
	}
	rb = d.deref(rb, "request body")
	content := rb.get("content")
	if !content.isObject() || len(content.keys) == 0 {
		if rb != nil {
			d.warn("request body without content; ignored")
		}
		return nil, nil
	}
	mt := chooseMedia(content.keys)
	media := content.get(mt)
	b := &Body{MediaType: mt, Required: rb.getBool("required", false)}
	if enc := media.get("encoding"); enc.isObject() {
		for i, k := range enc.keys {
			if ct := enc.items[i].getText("contentType"); ct != "" {
				if b.Encoding == nil {
					b.Encoding = map[string]string{}
				}
				b.Encoding[k] = ct
			}
		}
	}
	if wildcard(mt) {
		b.MediaType = "application/json"
	}
	return b, withDescription(d.bodySchema(b, media.get("schema")), rb)
}

// bodySchema is the input schema of a body of media type b.MediaType with
// the document's schema sn (possibly nil); for multipart bodies it finds
// the file properties.
func (d *deriver) bodySchema(b *Body, sn *value) []byte {
	switch classify(b.MediaType) {
	case classMultipart:
		return d.multipartSchema(b, sn)
	case classText:
		if sn == nil {
			return []byte(`{"type":"string"}`)
		}
		fallthrough
	case classJSON, classForm:
		return d.conv.schema(nil, sn, 0)
	}
	return []byte(fileSchema)
}

// multipartSchema is the input schema of a multipart body: the object's
// properties, those that are files (format binary or base64) accepting
// text or a Binary, and those that are arrays of files (OpenAPI 3's
// several files under one name) a list of them, one part each.
func (d *deriver) multipartSchema(b *Body, sn *value) []byte {
	sch := d.deref(sn, "")
	props := sch.get("properties")
	if !props.isObject() {
		return d.conv.schema(nil, sn, 0)
	}
	var p obj
	for i, k := range props.keys {
		ps := d.deref(&props.items[i], "")
		switch items := ps.get("items"); {
		case isFileSchema(ps):
			b.Files = append(b.Files, k)
			p.raw(k, withDescription([]byte(fileSchema), ps))
		case ps.getText("type") == "array" && items.isObject() && isFileSchema(d.deref(items, "")):
			b.Files = append(b.Files, k)
			p.raw(k, withDescription([]byte(`{"type":"array","items":`+fileSchema+`}`), ps))
		default:
			p.raw(k, d.conv.schema(nil, &props.items[i], 0))
		}
	}
	return objectSchema(sch.getText("description"), &p, sch.strings("required"), false)
}

// objectSchema is the schema of an object with props, of which required
// are required; with a description when desc is set, and no other
// properties when closed.
func objectSchema(desc string, props *obj, required []string, closed bool) []byte {
	var o obj
	o.str("type", "object")
	if desc != "" {
		o.str("description", desc)
	}
	o.raw("properties", props.done())
	if len(required) > 0 {
		o.raw("required", marshal(required))
	}
	if closed {
		o.raw("additionalProperties", []byte("false"))
	}
	return o.done()
}

// isFileSchema reports whether a schema describes a file: a binary or
// base64 string, or Swagger 2.0's type file.
func isFileSchema(s *value) bool {
	f := s.getText("format")
	return s.getText("type") == "file" || f == "binary" || f == "base64"
}

// formBody derives a Swagger 2.0 body made of formData parameters.
func (d *deriver) formBody(form []param, consumes []string) (*Body, []byte) {
	b := &Body{MediaType: "application/x-www-form-urlencoded"}
	if slices.Contains(consumes, "multipart/form-data") {
		b.MediaType = "multipart/form-data"
	}
	var props obj
	var required []string
	for _, f := range form {
		schema := f.schema
		if isFileSchema(f.value) {
			b.MediaType = "multipart/form-data"
			b.Files = append(b.Files, f.p.Name)
			schema = withDescription([]byte(fileSchema), f.value)
		}
		props.raw(f.p.Name, schema)
		if f.p.Required {
			required = append(required, f.p.Name)
			b.Required = true
		}
	}
	return b, objectSchema("", &props, required, false)
}

// output derives the output schema: the union of the 2xx responses'
// schemas (JSON bodies as their schema, text as a string, other content as
// a Binary, no content as null), or the default response's when there is
// no 2xx one; nil when there is neither.
func (d *deriver) output(op *value) json.RawMessage {
	resp := op.get("responses")
	if !resp.isObject() {
		return nil
	}
	var codes []string
	for _, k := range resp.keys {
		if _, err := strconv.Atoi(k); len(k) == 3 && k[0] == '2' && (err == nil || k == "2XX" || k == "2xx") {
			codes = append(codes, k)
		}
	}
	slices.Sort(codes) // "2XX" after the digits
	if len(codes) == 0 && resp.get("default") != nil {
		codes = []string{"default"}
	}
	var alts [][]byte
	for _, code := range codes {
		if r := d.deref(resp.get(code), "response"); r != nil {
			if s := d.responseSchema(op, r); !slices.ContainsFunc(alts, func(a []byte) bool { return bytes.Equal(a, s) }) {
				alts = append(alts, s)
			}
		}
	}
	switch len(alts) {
	case 0:
		return nil
	case 1:
		return alts[0]
	}
	return slices.Concat([]byte(`{"anyOf":[`), bytes.Join(alts, []byte(",")), []byte("]}"))
}

// responseSchema is the schema of what a call answered with response r
// returns: by the media type the answer will be decoded by (decodeBody),
// Swagger 2.0's produces or OpenAPI 3's content.
func (d *deriver) responseSchema(op, r *value) []byte {
	var mt string
	var sn *value
	if d.swagger2 {
		sn = r.get("schema")
		produces := op.strings("produces")
		if produces == nil {
			produces = d.root.strings("produces")
		}
		mt = chooseMedia(produces)
	} else if content := r.get("content"); content.isObject() && len(content.keys) > 0 {
		mt = chooseMedia(content.keys)
		sn = content.get(mt).get("schema")
		if sn == nil {
			sn = &value{kind: kindObject} // content of any value
		}
	}
	switch {
	case sn == nil:
		return []byte(`{"type":"null"}`)
	case mt == "" || wildcard(mt) || classify(mt) == classJSON:
		return d.conv.schema(nil, sn, 0)
	case classify(mt) == classText || classify(mt) == classForm:
		return []byte(`{"type":"string"}`)
	}
	return []byte(binarySchema)
}
