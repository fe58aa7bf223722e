package codemode_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// A principal's access token is never printed or marshalled: only the
// connector that trades it reads it (string(p.Token)).
func TestPrincipalTokenIsNotShown(t *testing.T) {
	const tok = "eyJ-secret-token-0f9a"
	p := &codemode.Principal{Subject: "alice", Token: codemode.Secret(tok)}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, shown := range []string{fmt.Sprint(p), fmt.Sprintf("%+v", p), fmt.Sprintf("%#v", p), fmt.Sprintf("%v %s", p.Token, p.Token), string(b)} {
		if strings.Contains(shown, tok) || !strings.Contains(shown, "[redacted]") {
			t.Errorf("shown as %s", shown)
		}
	}
	if string(p.Token) != tok {
		t.Error("the token itself is lost")
	}
}
