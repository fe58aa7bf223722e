package oauth

import (
	"strings"
	"testing"
	"time"
)

// A token endpoint's answer, JSON or a form: expires_in as a number or a
// string, the scopes granted, and the answers refused with what was wrong.
func TestParseTokens(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		body    string
		ct      string // "": application/json
		expiry  time.Time
		scopes  []string
		wantErr string
	}{
		{`{"access_token":"access-token-1234567890","expires_in":60,"scope":"x y"}`, "", now.Add(time.Minute), []string{"x", "y"}, ""},
		{`{"access_token":"access-token-1234567890","expires_in":"90","token_type":"bearer"}`, "", now.Add(90 * time.Second), nil, ""},
		{`{"access_token":"access-token-1234567890"}`, "", time.Time{}, nil, ""},
		{`{"access_token":"access-token-1234567890","expires_in":"soon"}`, "", time.Time{}, nil, `expires_in "soon" is not a number of seconds`},
		{`{"access_token":"access-token-1234567890","expires_in":true}`, "", time.Time{}, nil, `expires_in "true" is not a number of seconds`},
		{`{"access_token":"access-token-1234567890","token_type":"mac"}`, "", time.Time{}, nil, `token_type "mac" is not supported`},
		{`{"refresh_token":"r1"}`, "", time.Time{}, nil, "has no access_token"},
		{`{"access_token":"a\n1"}`, "", time.Time{}, nil, "characters a header cannot carry"},
		// Kept in the scrubber in several forms, the access token sent as
		// a header on every request: each token past 64 KiB is refused.
		{`{"access_token":"` + strings.Repeat("t", maxToken+1) + `"}`, "", time.Time{}, nil, "the access_token is longer than 64 KiB"},
		{`{"access_token":"` + strings.Repeat("t", maxToken) + `"}`, "", time.Time{}, nil, ""},
		{`{"access_token":"a1","refresh_token":"` + strings.Repeat("t", maxToken+1) + `"}`, "", time.Time{}, nil, "the refresh_token is longer than 64 KiB"},
		{`{"access_token":"a1","refresh_token":"` + strings.Repeat("t", maxToken) + `"}`, "", time.Time{}, nil, ""},
		{`{"access_token":"a1","id_token":"` + strings.Repeat("t", maxToken+1) + `"}`, "", time.Time{}, nil, "the id_token is longer than 64 KiB"},
		{`{"access_token":"a1","id_token":"` + strings.Repeat("t", maxToken) + `"}`, "", time.Time{}, nil, ""},
		{`access_token=a1&refresh_token=` + strings.Repeat("t", maxToken+1), "application/x-www-form-urlencoded", time.Time{}, nil, "the refresh_token is longer than 64 KiB"},
		{`[]`, "", time.Time{}, nil, "not a JSON object"},
		{`{"access_token":"access-token-1234567890","expires_in":-1}`, "", time.Time{}, nil, `expires_in "-1" is not a number of seconds`},
		{`access_token=access-token-1234567890&token_type=bearer&expires_in=60`, "application/x-www-form-urlencoded; charset=utf-8", now.Add(time.Minute), nil, ""},
		{`<html>`, "text/html", time.Time{}, nil, "not a JSON object"},
	} {
		got, err := parseTokens([]byte(tt.body), tt.ct, now)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "tttt") {
				t.Errorf("%.80s: %.200v, want an error saying %q", tt.body, err, tt.wantErr)
			}
		case err != nil || !got.Expiry.Equal(tt.expiry) || strings.Join(got.Scopes, " ") != strings.Join(tt.scopes, " "):
			t.Errorf("%.80s: %.200v, %.200v", tt.body, got, err)
		}
	}
}
