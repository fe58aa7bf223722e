package openapi

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bodyOp is an operation that sends a body of a media type.
func bodyOp(mediaType string, mod ...func(*Body)) *Operation {
	b := &Body{Prop: "body", MediaType: mediaType}
	for _, m := range mod {
		m(b)
	}
	return &Operation{Method: "POST", Path: "/b", Body: b}
}

// TestBodies checks the bytes and Content-Type a server receives for each
// body media type.
func TestBodies(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	for _, tt := range []struct {
		name     string
		op       *Operation
		args     string
		wantBody string
		wantCT   string
	}{
		{"json", bodyOp("application/json"), `{"body":{"name":"x", "n":1.50,"big":12345678901234567890,"s":"<é>"}}`, `{"name":"x","n":1.50,"big":12345678901234567890,"s":"<é>"}`, "application/json"},
		{"json string", bodyOp("application/json"), `{"body":"abc"}`, `"abc"`, "application/json"},
		{"+json", bodyOp("application/merge-patch+json"), `{"body":{"a":null}}`, `{"a":null}`, "application/merge-patch+json"},
		{"wildcard object is JSON", bodyOp("*/*"), `{"body":[1]}`, `[1]`, "application/json"},
		{"form", bodyOp("application/x-www-form-urlencoded", func(b *Body) { b.Encoding = map[string]string{"j": "application/json"} }),
			`{"body":{"a":"x y","list":[1,2],"meta":{"k":"v","d":{"e":true}},"j":{"z":1},"n":null,"empty":""}}`,
			"a=x%20y&list=1&list=2&meta%5Bk%5D=v&meta%5Bd%5D%5Be%5D=true&j=%7B%22z%22%3A1%7D&empty=", "application/x-www-form-urlencoded"},
		{"form string as is", bodyOp("application/x-www-form-urlencoded"), `{"body":"a=1&b=2"}`, "a=1&b=2", "application/x-www-form-urlencoded"},
		{"text", bodyOp("text/plain"), `{"body":"hello\nworld"}`, "hello\nworld", "text/plain"},
		{"text number", bodyOp("text/plain; charset=utf-8"), `{"body":42}`, "42", "text/plain; charset=utf-8"},
		{"xml string", bodyOp("application/xml"), `{"body":"<a>1</a>"}`, "<a>1</a>", "application/xml"},
		{"octet-stream string", bodyOp("application/octet-stream"), `{"body":"raw bytes"}`, "raw bytes", "application/octet-stream"},
		{"octet-stream binary", bodyOp("application/octet-stream"), `{"body":{"base64":"AAEC/w==","mediaType":"image/png"}}`, "\x00\x01\x02\xff", "application/octet-stream"},
		{"wildcard binary takes its media type", bodyOp("image/*"), `{"body":{"base64":"AAEC/w","mediaType":"image/png"}}`, "\x00\x01\x02\xff", "image/png"},
		{"wildcard binary without media type", bodyOp("image/*"), `{"body":{"base64":"AAEC_w"}}`, "\x00\x01\x02\xff", "application/octet-stream"},
		{"optional body absent", bodyOp("application/json"), `{}`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			callOK(t, c, tt.op, tt.args)
			got := rec.last(t)
			if string(got.Body) != tt.wantBody {
				t.Errorf("body %q, want %q", got.Body, tt.wantBody)
			}
			if ct := got.Header.Get("Content-Type"); ct != tt.wantCT {
				t.Errorf("Content-Type %q, want %q", ct, tt.wantCT)
			}
		})
	}
}

// A part of a multipart body, as a server reads it.
type part struct {
	Name, Filename, ContentType, Data string
}

// TestMultipart checks a multipart body part by part, as a server parses
// it: text fields, JSON parts, file parts from strings and Binary values,
// arrays of files, and the Encoding content types.
func TestMultipart(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	op := bodyOp("multipart/form-data", func(b *Body) {
		b.Files = []string{"photo", "doc", "files"}
		b.Encoding = map[string]string{"xml": "application/xml", "doc": "text/markdown", "photo": "image/png, image/jpeg", "meta2": "application/json"}
	})
	callOK(t, c, op, `{"body":{
		"name":"Rex","age":3,"ok":true,"skip":null,
		"tags":["a","b"],"meta":{"k":1},"meta2":"s",
		"photo":{"base64":"iVBORw==","filename":"p \"1\".png","mediaType":"image/png"},
		"doc":"# plain text content",
		"files":["one",{"base64":"dHdv","filename":"two.bin"}],
		"xml":"<a/>"}}`)
	got := rec.last(t)
	mt, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q: %v", got.Header.Get("Content-Type"), err)
	}
	r := multipart.NewReader(strings.NewReader(string(got.Body)), params["boundary"])
	var parts []part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		parts = append(parts, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data)})
	}
	want := []part{
		{"name", "", "", "Rex"},
		{"age", "", "", "3"},
		{"ok", "", "", "true"},
		{"tags", "", "application/json", `["a","b"]`},
		{"meta", "", "application/json", `{"k":1}`},
		{"meta2", "", "application/json", `"s"`},
		{"photo", `p "1".png`, "image/png", "\x89PNG"},
		{"doc", "doc", "text/markdown", "# plain text content"},
		{"files", "files", "application/octet-stream", "one"},
		{"files", "two.bin", "application/octet-stream", "two"},
		{"xml", "", "application/xml", "<a/>"},
	}
	if diff := cmp.Diff(want, parts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

// TestMultipartFileArray: a multipart property that is an array of files
// (type array, items a binary string: OpenAPI 3's way to upload several
// files) takes text or Binary items, and each is a file part. It was an
// array of strings sent as one JSON part (["one",{"base64":…}]), and a
// Binary item could not be given at all.
func TestMultipartFileArray(t *testing.T) {
	rec := newRecorder(t, nil)
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/up":{"post":{"operationId":"upload",
	  "requestBody":{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{
	    "files":{"type":"array","items":{"type":"string","format":"binary"}},
	    "more":{"type":"array","items":{"$ref":"#/components/schemas/File"}},
	    "tags":{"type":"array","items":{"type":"string"}}}}}}},
	  "responses":{"200":{"description":"ok"}}}}},
	  "components":{"schemas":{"File":{"type":"string","format":"binary"}}}}`
	c, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, doc), BaseURL: rec.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if d := declarations(t, c); !strings.Contains(d, "files?: (string | {") || !strings.Contains(d, "more?: (string | {") || !strings.Contains(d, "tags?: string[]") {
		t.Errorf("declarations:\n%s\nwant files and more arrays of text or Binary, tags strings", d)
	}
	res, err := c.Call(context.Background(), "upload", json.RawMessage(`{"body":{"files":["one",{"base64":"dHdv","filename":"two.bin"}],"more":["three"],"tags":["a"]}}`))
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, res.Message)
	}
	got := rec.last(t)
	_, params, _ := mime.ParseMediaType(got.Header.Get("Content-Type"))
	r := multipart.NewReader(strings.NewReader(string(got.Body)), params["boundary"])
	var parts []part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		parts = append(parts, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data)})
	}
	want := []part{
		{"files", "files", "application/octet-stream", "one"},
		{"files", "two.bin", "application/octet-stream", "two"},
		{"more", "more", "application/octet-stream", "three"},
		{"tags", "", "application/json", `["a"]`},
	}
	if diff := cmp.Diff(want, parts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

// TestBodyRefused checks bodies that cannot be sent: the call fails naming
// the body's input, and nothing is sent.
func TestBodyRefused(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	files := func(b *Body) { b.Files = []string{"f"} }
	for _, tt := range []struct {
		name string
		op   *Operation
		args string
		want string
	}{
		{"required", bodyOp("application/json", func(b *Body) { b.Required = true }), `{"body":null}`, `input "body" (request body) is required`},
		{"form array", bodyOp("application/x-www-form-urlencoded"), `{"body":[1]}`, `input "body" (request body, application/x-www-form-urlencoded): a form body must be an object (or a string already encoded), not an array`},
		{"multipart string", bodyOp("multipart/form-data"), `{"body":"x"}`, `a multipart body must be an object, not a string`},
		{"file number", bodyOp("multipart/form-data", files), `{"body":{"f":1}}`, `member "f" is a file: give a string (its text is the content) or {base64, filename?, mediaType?}, not a number`},
		{"file bad base64", bodyOp("multipart/form-data", files), `{"body":{"f":{"base64":"!!"}}}`, `member "f": base64: illegal base64 data`},
		{"file name line break", bodyOp("multipart/form-data", files), `{"body":{"f":{"base64":"","filename":"a\r\nb"}}}`, `filename "a\r\nb" holds a line break`},
		{"text object", bodyOp("text/plain"), `{"body":{"a":1}}`, `this body must be a string or {base64, mediaType?}, not an object`},
		{"xml object", bodyOp("application/xml"), `{"body":{"a":1}}`, `not an object`},
		{"octet-stream array", bodyOp("application/octet-stream"), `{"body":[1]}`, `not an array`},
		{"too large", bodyOp("text/plain"), `{"body":"` + strings.Repeat("x", maxRequestBody+1) + `"}`, `the encoded body is 33554433 bytes, over the limit of 33554432 bytes`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rec.requests())
			res, err := c.call(context.Background(), tt.op, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Message, tt.want) {
				t.Errorf("result %q, want an error with %q", res.Message, tt.want)
			}
			if n := len(rec.requests()); n != before {
				t.Errorf("the server got %d requests", n-before)
			}
		})
	}
}
