package resource

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"
)

// Challenge refuses a request as RFC 6750 and RFC 9728 say: the status;
// WWW-Authenticate naming the error code when given, the resource
// metadata at metadataURL, then the scope when given (the order of the
// MCP authorization specification's example); and the same as an OAuth
// error in a JSON body. The description is fixed text: never the token.
func Challenge(w http.ResponseWriter, status int, code, description, scope, metadataURL string) {
	params := []string{}
	if code != "" {
		params = append(params, authParam("error", code), authParam("error_description", description))
	}
	params = append(params, authParam("resource_metadata", metadataURL))
	if scope != "" {
		params = append(params, authParam("scope", scope))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": cmp.Or(code, "unauthorized"), "error_description": description})
}

// authParam is name="value" for a WWW-Authenticate header: a quoted
// string with its quotes and backslashes escaped and control characters
// dropped.
func authParam(name, value string) string {
	return name + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(noControls(value)) + `"`
}
