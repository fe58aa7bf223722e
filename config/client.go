package config

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Entries of {"mcpServers": …} (Claude Desktop, Claude Code, Cursor, Cline,
// Roo Code, Windsurf) and {"servers": …} (VS Code) are read as those clients
// write them, so a user can point codemode-mcp at a file they share with one.
// Names need not be identifiers there: they are sanitized, and SourceName
// keeps the original for messages.

// clientKeys are the keys such an entry may have. Besides the clients'
// common keys, the connector options of the native format are accepted.
var clientKeys = []string{
	"type", "command", "args", "env", "envFile", "cwd", "inherit_env", "url", "headers",
	"transportType", "serverUrl", "disabled", "timeout", "disabledTools",
	"description", "tools", "approve", "no_approve", "approvers", "revert", "forward_unknown", "start_timeout",
	"autoApprove", "alwaysAllow", "dev", "watchPaths", "gallery", "version",
}

// ignoredClientKeys are keys real clients define that have no meaning here,
// with the reason given to the user ("" ignores them silently).
var ignoredClientKeys = map[string]string{
	"autoApprove": "Cline's auto-approve list is ignored: approvals come from the approve globs and the tools' annotations",
	"alwaysAllow": "Roo Code's always-allow list is ignored: approvals come from the approve globs and the tools' annotations",
	"dev":         "VS Code's development mode (watch, debug) is ignored",
	"watchPaths":  "Roo Code's restart-on-change paths are ignored",
	"gallery":     "", // VS Code: where the entry was installed from
	"version":     "", // VS Code: the installed version
}

// clientTypes maps the transport names clients use to a kind.
var clientTypes = map[string]Kind{
	"stdio":           KindStdio,
	"sse":             KindSSE,
	"http":            KindHTTP,
	"streamable-http": KindHTTP, // Roo Code
	"streamableHttp":  KindHTTP, // Cline
}

// clientAliases are the keys that say the same thing in different
// clients' entries, and what they say.
var clientAliases = map[string]string{"url": "URL", "serverUrl": "URL", "type": "transport", "transportType": "transport"}

// stdioKeys only make sense for a command.
var stdioKeys = []string{"command", "args", "env", "envFile", "cwd", "inherit_env"}

func (d *decoder) clientServer(e entry, fp fieldPath) (parsed, bool) {
	c := Connector{Name: connectors.Identifier(e.key), SourceName: e.key, Line: e.keyPos.line}
	p := parsed{fp: fp, pos: e.keyPos}
	if e.val.kind != mapNode {
		want := `a server entry such as {"command": "npx", "args": […]} or {"url": "https://…"}`
		if strings.HasPrefix(string(fp), "servers.") && slices.Contains([]string{"name", "transport", "addr", "auth_token"}, e.key) {
			want += ` (for codemode-mcp's own settings, the section is "server:")`
		}
		d.typeErr(e.val, fp, want)
		return p, false
	}
	if why, ok := selfEntry(c.Name, e.val); ok {
		d.warnAt(e.keyPos, fp, "codemode-mcp's own entry ("+why+"); skipped: codemode-mcp does not connect to itself")
		return p, false
	}
	for _, f := range e.val.entries {
		if f.key == "disabled" {
			if off, ok := d.boolean(f.val, fp.key(f.key)); ok && off {
				d.warnAt(e.keyPos, fp, "disabled; skipped")
				return p, false
			}
		}
	}

	nerr := len(d.errs)
	var typ Kind
	var envFile string
	var envFileAt pos
	given := map[string]entry{} // by what it gives (clientAliases), the first key that does
	cv := reflect.ValueOf(&c).Elem()
	for _, f := range e.val.entries {
		ffp := fp.key(f.key)
		if what, ok := clientAliases[f.key]; ok {
			if first, dup := given[what]; dup {
				d.errAt(f.keyPos, ffp, fmt.Sprintf("the %s is already given by %s (line %d)", what, first.key, first.keyPos.line))
				continue
			}
			given[what] = f
		}
		switch f.key {
		case "envFile":
			envFile, _ = d.text(f.val, ffp, rule{path: true})
			envFileAt = f.val.pos
		case "url", "serverUrl":
			c.URL, _ = d.httpURL(f.val, ffp)
		case "type", "transportType":
			if v, ok := d.oneOf(f.val, ffp, slices.Sorted(maps.Keys(clientTypes))...); ok {
				typ = clientTypes[v]
			}
		case "disabled": // read above
		case "timeout":
			c.Timeout, _ = d.clientTimeout(f.val, ffp)
		case "disabledTools":
			c.Tools.Exclude = append(c.Tools.Exclude, d.list(f.val, ffp, rule{globs: true})...)
		default:
			if f.key == "approve" || f.key == "no_approve" {
				d.noPathGlobs(f.val, ffp)
			}
			if reason, ok := ignoredClientKeys[f.key]; ok {
				if reason != "" {
					d.warnAt(f.keyPos, ffp, reason)
				}
			} else if !slices.Contains(clientKeys, f.key) || !d.member(cv, f, fp) {
				d.unknownKey(f, fp, clientKeys)
			}
		}
	}

	hasCmd := hasKey(e.val, "command")
	urlEntry, hasURL := given["URL"]
	typeEntry := given["transport"]
	// only refuses the keys of e that are not for the entry's kind.
	only := func(keys []string, entries string) {
		for _, f := range e.val.entries {
			if slices.Contains(keys, f.key) {
				d.errAt(f.keyPos, fp.key(f.key), f.key+" applies to "+entries+" only")
			}
		}
	}
	switch {
	case hasCmd && hasURL:
		d.errAt(e.keyPos, fp, fmt.Sprintf("has both command and %s; an entry runs a command or connects to a URL", urlEntry.key))
	case !hasCmd && !hasURL:
		if len(d.errs) == nerr { // else an unknown key (a typo of command?) says more
			d.errAt(e.keyPos, fp, "needs command (a stdio server) or url (a remote server)")
		}
	case hasCmd:
		c.Kind = KindStdio
		if typ != 0 && typ != KindStdio {
			d.errAt(typeEntry.val.pos, fp.key(typeEntry.key), fmt.Sprintf("type %s needs a url, but this entry has a command", typ))
		}
		only([]string{"headers"}, "url entries")
	default:
		c.Kind = KindHTTP
		switch {
		case typ == KindSSE:
			c.Kind = KindSSE
		case typ == KindStdio:
			d.errAt(typeEntry.val.pos, fp.key(typeEntry.key), "type stdio needs a command, but this entry has a url")
		case typ == 0 && looksLikeSSE(c.URL):
			// Clients that detect the transport (Cursor, Claude Code) find
			// legacy SSE servers at …/sse; without a type, follow that.
			c.Kind = KindSSE
		}
		c.SSE = c.Kind == KindSSE
		only(stdioKeys, "command entries")
	}
	if envFile != "" && len(d.errs) == nerr {
		vals, err := readEnvFile(envFile)
		if err != nil {
			d.errAt(envFileAt, fp.key("envFile"), err.Error())
		} else if len(vals) > 0 {
			maps.Copy(vals, c.Env) // env wins over envFile
			c.Env = vals
		}
	}
	p.c = c
	return p, len(d.errs) == nerr
}

// clientTimeout reads a timeout as Cline and Roo Code write it (seconds, a
// number), or as a Go duration string.
func (d *decoder) clientTimeout(n *node, fp fieldPath) (time.Duration, bool) {
	if n.kind == intNode || n.kind == floatNode {
		secs, err := strconv.ParseFloat(n.text, 64)
		if err != nil || secs < 0 || secs > 1e9 {
			d.errAt(n.pos, fp, fmt.Sprintf("expected a number of seconds or a duration such as \"30s\", got %s", n.text))
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	return d.duration(n, fp)
}

// selfEntry reports whether a client entry (a mapping) is the one that starts
// codemode-mcp itself, as the README tells users to add to the very file
// they may then serve from, and says how it was recognised: by its name,
// which is reserved for the sandbox's own API, or by its command
// (codemode-mcp serve, under any name). Values are read as written, before
// ${…} expansion: only the command's base name matters.
func selfEntry(name string, n *node) (string, bool) {
	if name == "codemode" {
		return `named "codemode"`, true
	}
	var cmd, first string
	for _, f := range n.entries {
		switch f.key {
		case "command":
			if f.val.scalar() {
				cmd = f.val.text
			}
		case "args":
			if f.val.kind == seqNode && len(f.val.items) > 0 && f.val.items[0].scalar() {
				first = f.val.items[0].text
			}
		}
	}
	base := cmd[strings.LastIndexAny(cmd, `/\`)+1:]
	if strings.EqualFold(base, "codemode-mcp") || strings.EqualFold(base, "codemode-mcp.exe") {
		if first == "serve" {
			return "it runs codemode-mcp serve", true
		}
	}
	return "", false
}

func looksLikeSSE(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse")
}
