package openapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkGET measures what the caller adds to a small GET against a
// local server: "direct" is the same request made with net/http alone.
func BenchmarkGET(b *testing.B) {
	rec := newRecorder(b, answerWith(200, "application/json", `{"id":1,"name":"Rex","tags":["a","b"]}`))
	op := &Operation{Method: "GET", Path: "/pets/{id}", Params: []Param{
		{Name: "id", Prop: "id", In: InPath, Required: true, Style: StyleSimple},
		{Name: "tags", Prop: "tags", In: InQuery, Style: StyleForm, Explode: true},
	}}
	args := json.RawMessage(`{"id":12,"tags":["a","b"]}`)
	b.Run("caller", func(b *testing.B) {
		c := newTestCaller(b, rec.srv.URL, func(cfg *Config) { cfg.Auth = &Auth{Bearer: "bench-token"} })
		ctx := context.Background()
		for b.Loop() {
			if res, err := c.call(ctx, op, args); err != nil || res.IsError {
				b.Fatal(err, res.Message)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		for b.Loop() {
			req, _ := http.NewRequest("GET", rec.srv.URL+"/pets/12?tags=a&tags=b", nil)
			req.Header.Set("Authorization", "Bearer bench-token")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !json.Valid(body) {
				b.Fatal("invalid JSON")
			}
		}
	})
}
