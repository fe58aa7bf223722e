package openapi

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// scalar reports whether v is a string, number or boolean.
func (v value) scalar() bool {
	return v.kind == kindString || v.kind == kindNumber || v.kind == kindBool
}

// member returns the value of an object's member, and whether it has one
// (the last, when a name repeats, as JSON decoders do).
func (v value) member(name string) (value, bool) {
	if m := v.get(name); m != nil {
		return *m, true
	}
	return value{}, false
}

// String returns v as parameter text: a scalar's text, anything else as
// JSON.
func (v value) String() string {
	if v.scalar() {
		return v.text
	}
	return string(v.appendJSON(nil))
}

// appendJSON appends v as compact JSON.
func (v value) appendJSON(b []byte) []byte {
	switch v.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool, kindNumber:
		return append(b, v.text...)
	case kindString:
		return jsontext.AppendStringNoHTML(b, v.text)
	case kindArray:
		b = append(b, '[')
		for i, it := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.appendJSON(b)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendStringNoHTML(b, k)
			b = append(b, ':')
			b = v.items[i].appendJSON(b)
		}
		return append(b, '}')
	}
}

// binaryKeys are the members a Binary object may have.
var binaryKeys = []string{"base64", "filename", "mediaType"}

// binary returns v as a Binary (content decoded) when v is an object with
// a string base64 member and no members other than Binary's; ok is false
// for any other value. err reports a Binary whose base64 or other members
// are malformed.
func (v value) binary() (b Binary, content []byte, ok bool, err error) {
	if v.kind != kindObject {
		return Binary{}, nil, false, nil
	}
	for _, k := range v.keys {
		if !slices.Contains(binaryKeys, k) {
			return Binary{}, nil, false, nil
		}
	}
	data, has := v.member("base64")
	if !has || data.kind != kindString {
		return Binary{}, nil, false, nil
	}
	b.Base64 = data.text
	if content, err = decodeBase64(data.text); err != nil {
		return Binary{}, nil, true, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"filename", &b.Filename}, {"mediaType", &b.MediaType}} {
		m, has := v.member(f.name)
		switch {
		case !has || m.kind == kindNull:
		case m.kind == kindString:
			*f.dst = m.text
		default:
			return Binary{}, nil, true, fmt.Errorf("%s must be a string", f.name)
		}
	}
	return b, content, true, nil
}

// decodeBase64 decodes standard base64, and also its unpadded and URL-safe
// variants, which programs that build base64 by hand produce.
func decodeBase64(s string) ([]byte, error) {
	var first error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err == nil {
			return b, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, fmt.Errorf("base64: %w", first)
}
