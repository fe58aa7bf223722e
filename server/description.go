package server

import (
	"fmt"
	"sort"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// inlineBudget is how many characters of TypeScript declarations the
// codemode tool description may carry inline; past it the model discovers
// methods with codemode.search and codemode.describe.
const inlineBudget = 6000

// maxToolNamesPerLine bounds the method names listed on a connector's line.
const maxToolNamesPerLine = 12

// Description builds the codemode tool description: the workflow, the rules,
// one line per connector, and the declarations inline while they fit the
// budget (tooLarge: there are declarations, too large to inline). Its size
// is bounded whatever the number of methods.
func Description(infos []codemode.ConnectorInfo, declarations string, tooLarge bool) string {
	var b strings.Builder
	b.WriteString(`Run a JavaScript or TypeScript program that calls the connectors below as typed global objects, and get its result.

Workflow:
1. Find methods: await codemode.search("issue create") returns paths; await codemode.describe("github.create_issue") returns TypeScript types.
2. Write one async program that does the whole task: async () => { const r = await notes.listNotes({}); return r.notes.length; }
3. The value the program returns (JSON) is the result; console.log output is returned in logs.

Rules:
- Every connector method takes ONE object argument and returns a Promise: await it.
- No require, import, process, fetch, file system or network: all I/O goes through the connectors.
- Calls that need a human's approval pause the program (status "paused"); after approval it re-runs from the start, replaying logged results, so keep programs deterministic. Date.now(), new Date() and Math.random() replay automatically; wrap anything else non-deterministic in codemode.step(name, fn).
- codemode.run(name, input) runs a saved snippet.
- Errors are returned with line:col; fix the program and try again.
`)
	b.WriteString("\nConnectors:\n")
	if len(infos) == 0 {
		b.WriteString("- (none configured)\n")
	}
	for _, c := range infos {
		b.WriteString(connectorLine(c))
		b.WriteByte('\n')
	}
	switch {
	case tooLarge || len(declarations) > inlineBudget:
		b.WriteString("\nThe declarations are too large to list here: use codemode.search and codemode.describe.\n")
	case declarations != "":
		b.WriteString("\nDeclarations:\n```ts\n")
		b.WriteString(strings.TrimRight(declarations, "\n"))
		b.WriteString("\n```\n")
	}
	return b.String()
}

func connectorLine(c codemode.ConnectorInfo) string {
	if c.Error != "" {
		return fmt.Sprintf("- %s: unavailable (%s)", c.Name, firstLine(c.Error))
	}
	names := make([]string, 0, len(c.Tools))
	approval := 0
	for _, t := range c.Tools {
		names = append(names, t.Name)
		if t.RequiresApproval {
			approval++
		}
	}
	sort.Strings(names)
	shown := names
	more := ""
	if len(shown) > maxToolNamesPerLine {
		shown = shown[:maxToolNamesPerLine]
		more = fmt.Sprintf(", … %d more", len(names)-maxToolNamesPerLine)
	}
	line := fmt.Sprintf("- %s: %d methods (%s%s)", c.Name, len(names), strings.Join(shown, ", "), more)
	if c.Description != "" {
		line = fmt.Sprintf("- %s — %s: %d methods (%s%s)", c.Name, firstLine(c.Description), len(names), strings.Join(shown, ", "), more)
	}
	if approval > 0 {
		line += fmt.Sprintf("; %d require approval", approval)
	}
	return line
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
