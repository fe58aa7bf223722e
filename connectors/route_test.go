package connectors

import "testing"

func TestMatchPath(t *testing.T) {
	for _, tt := range []struct {
		glob, path string
		want       bool
	}{
		{"/admin/*", "/admin/users", true},
		{"/admin/*", "/admin/users/1/keys", true}, // '*' crosses '/'
		{"/admin/*", "/ADMIN/Users", true},        // case does not matter
		{"/admin/*", "/admin", false},
		{"/admin*", "/admin", true},
		{"/repos/*/actions/*", "/repos/o/r/actions/runs", true},
		{"/repos/*/actions/*", "/repos/o/r/issues", false},
		{"/a/[b]", "/a/[b]", true}, // no other special character
		{"/a/?", "/a/x", false},
		{"*", "", true},
		{"", "", true},
		{"", "/", false},
		{"/x/*/z", "/x/y/y/z", true},
	} {
		if got := MatchPath(tt.glob, tt.path); got != tt.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", tt.glob, tt.path, got, tt.want)
		}
	}
}
