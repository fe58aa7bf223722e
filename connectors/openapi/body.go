package openapi

import (
	"bytes"
	"cmp"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"
)

// maxRequestBody bounds an encoded request body.
const maxRequestBody = 32 << 20

// A mediaClass is how a body of a media type is written and read.
type mediaClass uint8

const (
	classBinary    mediaClass = iota // bytes: a string's text or a Binary's content
	classJSON                        // application/json, */*+json
	classForm                        // application/x-www-form-urlencoded
	classMultipart                   // multipart/*
	classText                        // text/*, XML, YAML, JavaScript
)

// classify returns the class of a media type (parameters allowed, case
// ignored).
func classify(mediaType string) mediaClass {
	mt := bareMediaType(mediaType)
	switch {
	case mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json"):
		return classJSON
	case mt == "application/x-www-form-urlencoded":
		return classForm
	case strings.HasPrefix(mt, "multipart/"):
		return classMultipart
	case strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml") ||
		mt == "application/yaml" || mt == "application/x-yaml" || mt == "application/javascript":
		return classText
	}
	return classBinary
}

// bareMediaType returns a media type without its parameters, lower case.
func bareMediaType(mediaType string) string {
	mt, _, _ := strings.Cut(mediaType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// concrete reports whether a media type names one type (no wildcard, not
// a list), so it can be sent as a Content-Type.
func concrete(mediaType string) bool {
	return mediaType != "" && !strings.ContainsAny(mediaType, "*,")
}

// An encodedBody is a request body ready to send.
type encodedBody struct {
	data        []byte
	contentType string
}

// encodeBody encodes v (not null) for body b's media type:
//   - JSON media types: v as JSON;
//   - application/x-www-form-urlencoded: an object's members as form pairs
//     (arrays repeat the key, objects nest in brackets, members whose
//     Encoding is a JSON type are sent as JSON text), or a string as it is;
//   - multipart: one part per member of an object (see encodeMultipart);
//   - text/*, XML and YAML: a string (or a number or boolean) as its text,
//     or a Binary's content;
//   - anything else (application/octet-stream, image/png, ...): a string's
//     text or a Binary's content, and JSON when the media type is a
//     wildcard ("*/*").
//
// The Content-Type is b.MediaType when it names one type, else the
// Binary's mediaType, else the class's usual type. (checkSize bounds the
// encoded body.)
func encodeBody(b *Body, v value) (encodedBody, error) {
	ct := b.MediaType
	class := classify(ct)
	switch class {
	case classJSON:
		if !concrete(ct) {
			ct = "application/json"
		}
		return encodedBody{data: v.appendJSON(nil), contentType: ct}, nil
	case classForm:
		switch v.kind {
		case kindString:
			return encodedBody{data: []byte(v.text), contentType: ct}, nil
		case kindObject:
			return encodedBody{data: encodeForm(v, b.Encoding), contentType: ct}, nil
		}
		return encodedBody{}, fmt.Errorf("a form body must be an object (or a string already encoded), not %s", kindName(v.kind))
	case classMultipart:
		if v.kind != kindObject {
			return encodedBody{}, fmt.Errorf("a multipart body must be an object, not %s", kindName(v.kind))
		}
		return encodeMultipart(ct, v, b.Files, b.Encoding)
	}
	bin, content, isBin, err := v.binary()
	if err != nil {
		return encodedBody{}, err
	}
	switch {
	case isBin && !concrete(ct) && bin.MediaType != "":
		ct = bin.MediaType
	case !concrete(ct) && class == classText:
		ct = "text/plain; charset=utf-8"
	case !concrete(ct):
		ct = "application/octet-stream"
	}
	switch {
	case isBin:
		return encodedBody{data: content, contentType: ct}, nil
	case v.kind == kindString || class == classText && v.scalar():
		return encodedBody{data: []byte(v.text), contentType: ct}, nil
	case !concrete(b.MediaType) && class == classBinary:
		return encodedBody{data: v.appendJSON(nil), contentType: "application/json"}, nil
	}
	return encodedBody{}, fmt.Errorf("this body must be a string or {base64, mediaType?}, not %s", kindName(v.kind))
}

// encodeForm encodes an object's members as application/x-www-form-urlencoded
// pairs: scalars as key=value, arrays as repeated keys (form, exploded: the
// Encoding Object's default), objects in brackets (key[a]=1, as
// deepObject), members whose Encoding content type is JSON as JSON text.
// Null members are left out.
func encodeForm(v value, encoding map[string]string) []byte {
	var b []byte
	for i, k := range v.keys {
		it := v.items[i]
		if it.kind == kindNull {
			continue
		}
		p := Param{Name: k, Style: StyleForm, Explode: true}
		switch {
		case classify(encoding[k]) == classJSON:
			it = value{kind: kindString, text: string(it.appendJSON(nil))}
		case it.kind == kindObject:
			p.Style = StyleDeepObject
		}
		b = appendQueryParam(b, &p, it)
	}
	return b
}

// encodeMultipart writes an object's members as the parts of a multipart
// body, in the order the program wrote them:
//   - members listed in files are file parts (filename set): a string's
//     text or a Binary's content ({base64, filename?, mediaType?}); an
//     array of them is one part each;
//   - strings, numbers and booleans are text parts;
//   - arrays and objects are JSON parts (application/json);
//   - a member's Encoding content type, when it names one type, is its
//     part's Content-Type (a JSON type makes the part JSON text); a
//     Binary's own mediaType comes first.
//
// Null members are left out.
func encodeMultipart(mediaType string, v value, files []string, encoding map[string]string) (encodedBody, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for i, name := range v.keys {
		it := v.items[i]
		if it.kind == kindNull {
			continue
		}
		enc := encoding[name]
		if !concrete(enc) {
			enc = ""
		}
		if slices.Contains(files, name) {
			items := []value{it}
			if it.kind == kindArray {
				items = it.items
			}
			for _, f := range items {
				if err := writeFilePart(w, name, f, enc); err != nil {
					return encodedBody{}, err
				}
			}
			continue
		}
		data := []byte(it.text)
		if enc != "" && classify(enc) == classJSON || !it.scalar() {
			data, enc = it.appendJSON(nil), cmp.Or(enc, "application/json")
		}
		if err := writePart(w, name, "", enc, data); err != nil {
			return encodedBody{}, err
		}
	}
	if err := w.Close(); err != nil {
		return encodedBody{}, err
	}
	sub := "form-data"
	if mt := bareMediaType(mediaType); concrete(mt) {
		sub = strings.TrimPrefix(mt, "multipart/")
	}
	ct := mime.FormatMediaType("multipart/"+sub, map[string]string{"boundary": w.Boundary()})
	return encodedBody{data: buf.Bytes(), contentType: ct}, nil
}

// writeFilePart writes one file part of member name.
func writeFilePart(w *multipart.Writer, name string, f value, enc string) error {
	bin, content, isBin, err := f.binary()
	switch {
	case err != nil:
		return fmt.Errorf("member %q: %w", name, err)
	case isBin:
	case f.kind == kindString:
		content = []byte(f.text)
	default:
		return fmt.Errorf("member %q is a file: give a string (its text is the content) or {base64, filename?, mediaType?}, not %s", name, kindName(f.kind))
	}
	return writePart(w, name, cmp.Or(bin.Filename, name), cmp.Or(bin.MediaType, enc, "application/octet-stream"), content)
}

// quoteEscaper escapes a Content-Disposition parameter as
// multipart.Writer.CreateFormFile does.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// writePart writes one form-data part; filename "" makes it a field.
func writePart(w *multipart.Writer, name, filename, contentType string, data []byte) error {
	for _, f := range [...][2]string{{"member name", name}, {"filename", filename}, {"content type", contentType}} {
		if strings.ContainsAny(f[1], "\r\n") {
			return fmt.Errorf("%s %q holds a line break", f[0], f[1])
		}
	}
	h := textproto.MIMEHeader{}
	disp := `form-data; name="` + quoteEscaper.Replace(name) + `"`
	if filename != "" {
		disp += `; filename="` + quoteEscaper.Replace(filename) + `"`
	}
	h.Set("Content-Disposition", disp)
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(data)
	return err
}
