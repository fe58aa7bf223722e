package server

import (
	"fmt"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// maxConnectorLine bounds the text of a connector's line.
const maxConnectorLine = 160

// descriptionHead is the workflow and the rules; %[1]s is a method to show
// (exampleMethod) and %[2]s a program calling it.
const descriptionHead = `Run a JavaScript or TypeScript program against the connectors below (typed global objects) and get its result.

Workflow:
1. Find methods: await codemode.search("create issue") returns {results: [{path, description, requiresApproval}], total}.
2. Read exact types: await codemode.describe("%[1]s") returns the TypeScript of its input and output.
3. Do the whole task in one program: %[2]s. Its return value (JSON) is the result; console.log lines come back in logs.

Rules:
- A connector method takes ONE object argument and returns a Promise: await it.
- The program is checked before it runs: unknown methods and arguments that do not fit are all reported with line:col, and nothing runs.
- No require, import, process, fetch, file system or network: all I/O goes through the connectors.
- Calls that need a human's approval pause the program (status "paused"); once approved it re-runs from the start, replaying logged results, so keep it deterministic: Date.now(), new Date() and Math.random() replay by themselves; wrap anything else non-deterministic in codemode.step(name, fn).
- A call to a connector that needs the user to sign in pauses the program the same way (its pending action has "awaits": "sign_in"); it goes on once they have signed in.
- codemode.run(name, input) runs a saved snippet.
- Errors come with line:col; fix the program and run it again.
`

// exampleMethod is the path of a method the description's examples show:
// the first method of the first connector that has one, so that the
// examples name only what is configured ("connector.method" when none
// has a method).
func exampleMethod(infos []codemode.ConnectorInfo) string {
	for _, c := range infos {
		if c.Error == "" && len(c.Tools) > 0 {
			return c.Name + "." + c.Tools[0].Name
		}
	}
	return "connector.method"
}

// Description builds the codemode tool description: the workflow, the
// rules, one line per connector (its name, its number of methods, the
// first sentence of its description), and the declarations inline when
// there are some and they fit (tooLarge: there are declarations, too
// large to inline). Its size is bounded whatever the number of methods.
func Description(infos []codemode.ConnectorInfo, declarations string, tooLarge bool) string {
	var b strings.Builder
	m := exampleMethod(infos)
	fmt.Fprintf(&b, descriptionHead, m, "async () => { const r = await "+m+"({ /* … */ }); return r; }")
	b.WriteString("\nConnectors:\n")
	if len(infos) == 0 {
		b.WriteString("- (none configured)\n")
	}
	for _, c := range infos {
		b.WriteString(connectorLine(c))
		b.WriteByte('\n')
	}
	switch {
	case tooLarge:
		b.WriteString("\nTheir declarations are not listed here: find methods with codemode.search and read their types with codemode.describe.\n")
	case declarations != "":
		b.WriteString("\nDeclarations:\n```ts\n")
		b.WriteString(strings.TrimRight(declarations, "\n"))
		b.WriteString("\n```\n")
	}
	return b.String()
}

// connectorLine is "- name (N methods): first sentence", or why the
// connector is unavailable.
func connectorLine(c codemode.ConnectorInfo) string {
	if c.NeedsSignIn {
		return fmt.Sprintf("- %s: needs the user to sign in; its methods are listed once they have (a call pauses the run until then)", c.Name)
	}
	if c.Error != "" {
		return fmt.Sprintf("- %s: unavailable (%s)", c.Name, short.Clip(short.FirstLine(c.Error), maxConnectorLine))
	}
	line := fmt.Sprintf("- %s (%d %s)", c.Name, len(c.Tools), short.Plural(len(c.Tools), "method", "methods"))
	if s := firstSentence(c.Description); s != "" {
		line += ": " + short.Clip(s, maxConnectorLine)
	}
	return line
}

// firstSentence is the first line of s up to the end of its first
// sentence (a period, question or exclamation mark before a space).
func firstSentence(s string) string {
	s = short.FirstLine(s)
	for i := 0; i+1 < len(s); i++ {
		if strings.IndexByte(".!?", s[i]) >= 0 && s[i+1] == ' ' {
			return s[:i+1]
		}
	}
	return s
}
