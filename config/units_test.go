package config

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"256MiB", 256 << 20, false},
		{"1GiB", 1 << 30, false},
		{"1.5GiB", 3 << 29, false},
		{"512MB", 512e6, false},
		{"512 mb", 512e6, false},
		{"64kib", 64 << 10, false},
		{"1_000", 1000, false},
		{"100B", 100, false},
		{"1024", 1024, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"12 parsecs", 0, true},
		{"1.2.3MB", 0, true},
		{"99999999TiB", 0, true},
		{"8388607TiB", 8388607 << 40, false}, // the largest the error names
		{"8388608TiB", 0, true},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestKindString(t *testing.T) {
	want := map[Kind]string{KindBuiltin: "builtin", KindStdio: "stdio", KindHTTP: "http", KindSSE: "sse", KindOpenAPI: "openapi", 0: "unknown"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), s)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "c.yaml", Line: 12, Column: 3, Field: "connectors.files.comand", Msg: "unknown key"}, "c.yaml:12:3: connectors.files.comand: unknown key"},
		{Error{File: "c.yaml", Line: 1, Msg: "bad"}, "c.yaml:1: bad"},
		{Error{File: "c.yaml", Field: "server.addr", Msg: "bad"}, "c.yaml: server.addr: bad"},
		{Error{Line: 2, Column: 1, Msg: "bad"}, "2:1: bad"},
		{Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestTags reads the tag of every field the walker can reach from Config,
// so that a bad option or an unknown check fails here rather than when a
// file first uses the key.
func TestTags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[time.Duration]() {
			return
		}
		seen[t] = true
		for _, r := range rules(t) {
			walk(reflect.TypeOf(reflect.New(t).Elem().FieldByIndex(r.index).Interface()))
		}
	}
	walk(reflect.TypeFor[Config]())
	walk(reflect.TypeFor[Connector]())
	walk(reflect.TypeFor[TokenExchange]()) // read by credentials, not through a tag
	if len(seen) < 18 {
		t.Errorf("walked %d struct types, want every one under Config and Connector", len(seen))
	}
	own := []string{"type", "transportType", "serverUrl", "envFile", "disabled", "disabledTools"}
	for _, k := range clientKeys {
		_, ignored := ignoredClientKeys[k]
		if _, native := ruleOf(reflect.TypeFor[Connector](), k); !native && !ignored && !slices.Contains(own, k) {
			t.Errorf("client key %q is neither a connector key nor a client's own", k)
		}
	}
}
