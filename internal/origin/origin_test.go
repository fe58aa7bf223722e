package origin

import (
	"net/url"
	"testing"
)

func TestSame(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"https://api.example.com/a", "https://api.example.com:443/b?x=1", true},
		{"http://Example.COM/", "HTTP://example.com:80/x", true},
		{"https://api.example.com/", "http://api.example.com/", false},
		{"https://api.example.com/", "https://evil.example.com/", false},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/", false},
		{"http://127.0.0.1/", "http://127.0.0.1:443/", false},
	}
	for _, c := range cases {
		a, _ := url.Parse(c.a)
		b, _ := url.Parse(c.b)
		if got := Same(a, b); got != c.want {
			t.Errorf("Same(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestIsHTTP(t *testing.T) {
	for s, want := range map[string]bool{
		"https://api.example.com/openapi.json": true,
		"HTTP://example.com":                   true,
		"http://":                              true,
		"./openapi.yaml":                       false,
		"ftp://example.com/a":                  false,
		"http:/x":                              false,
		"":                                     false,
	} {
		if got := IsHTTP(s); got != want {
			t.Errorf("IsHTTP(%q) = %v, want %v", s, got, want)
		}
	}
}
