package oauth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		in   []string
		want []Challenge
	}{
		{[]string{`Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="files:read files:write"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{
				"resource_metadata": "https://a.example/.well-known/oauth-protected-resource", "scope": "files:read files:write"}}}},
		// Several challenges in one header, a token68, commas inside quotes,
		// escapes, odd spacing and case.
		{[]string{`Basic realm="a, b", Negotiate abc==, BEARER   Error = "insufficient_scope" ,scope=x, error_description="say \"no\""`},
			[]Challenge{
				{Scheme: "Basic", Params: map[string]string{"realm": "a, b"}},
				{Scheme: "Negotiate", Token68: "abc==", Params: map[string]string{}},
				{Scheme: "BEARER", Params: map[string]string{"error": "insufficient_scope", "scope": "x", "error_description": `say "no"`}},
			}},
		// Several headers; a bare scheme; empty list elements.
		{[]string{`Bearer`, `, , DPoP algs="ES256",, realm=r`},
			[]Challenge{
				{Scheme: "Bearer", Params: map[string]string{}},
				{Scheme: "DPoP", Params: map[string]string{"algs": "ES256", "realm": "r"}},
			}},
		// A duplicate parameter keeps its first value; a broken quote ends
		// the header but keeps what came before.
		{[]string{`Bearer scope=a, scope=b, realm="unterminated`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"scope": "a"}}}},
		{[]string{`="x"`}, nil},
		// A missing comma ends the header, keeping the parameter before it.
		{[]string{`Bearer resource_metadata="https://m" scope="a", Basic realm=r`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://m"}}}},
	}
	for _, tt := range tests {
		got := ParseChallenges(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseChallenges(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	b := bearerChallenge([]string{`Basic realm=x`, `Bearer error="insufficient_scope", scope="a b", resource_metadata="https://m"`})
	if !b.found || b.err != "insufficient_scope" || !cmp.Equal(b.scopes, []string{"a", "b"}) || b.resourceMetadata != "https://m" {
		t.Errorf("bearerChallenge: %+v", b)
	}
	if b := bearerChallenge([]string{`Basic realm=x`}); b.found {
		t.Errorf("bearerChallenge of Basic: %+v", b)
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://a/b", scope="x y"`,
		`Basic realm="a, b", Negotiate abc==, Bearer error=x`,
		`Bearer realm="\"\\"`, `, ,`, `Bearer a=, b`, `x y=z w`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range ParseChallenges([]string{s}) {
			if c.Scheme == "" {
				t.Fatalf("a challenge without a scheme from %q", s)
			}
			for k := range c.Params {
				if k == "" {
					t.Fatalf("an empty parameter name from %q", s)
				}
			}
		}
	})
}
