package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// EnvConfig is the environment variable naming the config file when no
// --config flag is given.
const EnvConfig = "CODEMODE_CONFIG"

// DefaultFile is the file looked for in the working directory.
const DefaultFile = "codemode.yaml"

// Find returns the config file to load: flag when set, else $CODEMODE_CONFIG
// when set, else ./codemode.yaml when it exists, else "" (meaning Default).
// It does not check that an explicitly named file exists: Load reports that.
func Find(flag string) (string, error) {
	if named := cmp.Or(flag, os.Getenv(EnvConfig)); named != "" {
		return named, nil
	}
	fi, err := os.Stat(DefaultFile)
	switch {
	case err == nil && fi.IsDir():
		return "", fmt.Errorf("%s is a directory, not a config file", DefaultFile)
	case err == nil:
		return DefaultFile, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	}
	return "", fmt.Errorf("look for %s: %w", DefaultFile, err)
}

// maxConfigFile bounds a config file: real ones are a few KiB.
const maxConfigFile = 4 << 20

// Load reads and parses the file at path. It may be a pipe (--config
// <(…)), so it is read up to maxConfigFile rather than checked for size.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config file %s does not exist: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read config file %s: %w", path, err)
	}
	defer f.Close()
	if err := othersCanWrite(f, path); err != nil {
		return nil, err
	}
	data, err := readAtMost(f, path, maxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("read config file %s: %w", path, err)
	}
	return Parse(data, path)
}

// othersCanWrite refuses a config file (a regular one: a pipe is made for
// its reader) that every user could change, by writing it or by replacing
// it in its directory: the file names the commands codemode-mcp runs and
// where it sends credentials. Windows has no such mode bits.
func othersCanWrite(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || runtime.GOOS == "windows" {
		return nil
	}
	if m := fi.Mode().Perm(); m&0o002 != 0 {
		return fmt.Errorf("config file %s is writable by every user (mode %04o), and it names the commands codemode-mcp runs: make it yours alone (chmod o-w %s)", path, m, path)
	}
	dir := filepath.Dir(path)
	if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o002 != 0 && di.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("config file %s is in a directory every user can write to (%s, mode %04o), where anyone could replace it, and it names the commands codemode-mcp runs: move it, or chmod o-w %s", path, dir, di.Mode().Perm(), dir)
	}
	return nil
}

// Parse parses and validates a configuration. file names it in messages and
// anchors relative paths (store.path, cwd, openapi, envFile); it may be "".
// The error is an *Error, or the errors.Join of several, in file order.
func Parse(data []byte, file string) (*Config, error) {
	return parse(data, file, os.LookupEnv)
}

func parse(data []byte, file string, lookup func(string) (string, bool)) (*Config, error) {
	d := &decoder{file: file, at: map[fieldPath]pos{}}
	if file != "" {
		d.dir = filepath.Dir(file)
		if abs, err := filepath.Abs(d.dir); err == nil {
			d.dir = abs
		}
	}
	home, _ := os.UserHomeDir()
	d.vars = &vars{lookup: lookup}
	clientVars := &vars{lookup: lookup, client: true, workspace: workspaceFolder(d.dir), home: home}

	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM, as Windows editors write
	data = jsoncToJSON(data)                              // VS Code's files have comments
	tokens := lexer.Tokenize(string(data))
	if tk, msg := tooComplex(tokens); tk != nil {
		p := tokPos(tk)
		return nil, &Error{File: file, Line: p.line, Column: p.col, Msg: msg}
	}
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, d.syntaxError(err)
	}
	root := d.document(f)
	if len(d.errs) > 0 {
		return nil, collect(d.errs)
	}

	cfg := defaults()
	cfg.Path = file
	var cs []parsed
	for _, e := range d.entries(root, "") {
		fp := fieldPath("").key(e.key)
		switch e.key {
		case "connectors":
			cs = append(cs, d.connectors(e.val, fp, d.connector)...)
		case "mcpServers", "servers": // Claude Desktop, Claude Code, Cursor; VS Code
			native := d.vars
			d.vars = clientVars
			cs = append(cs, d.connectors(e.val, fp, d.clientServer)...)
			d.vars = native
		case "inputs", "$schema", "globalShortcut", "preferences":
			// VS Code's prompted inputs (${input:…} references are reported
			// where they are used), editors' schema hint, and Claude
			// Desktop's own settings, when its file is used as is.
		default:
			if !d.member(reflect.ValueOf(cfg).Elem(), e, "") {
				d.unknownKey(e, "", append(keys(reflect.TypeFor[Config]()), "connectors", "mcpServers", "servers", "inputs", "$schema", "globalShortcut", "preferences"))
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b parsed) int { return a.pos.line - b.pos.line })
	cfg.Connectors = d.uniqueConnectors(cs)
	d.authToken(cfg, lookup)
	d.checkServerAuth(cfg)
	if fp := fieldPath("").key("approvals").key("approvers"); d.at[fp] != (pos{}) {
		d.checkApprovers(d.at[fp], fp, &cfg.Approvals.Approvers)
	}
	d.warnOpenListener(cfg.Server)
	cfg.Store.PathLine = d.at["store.path"].line
	if len(d.errs) > 0 {
		return nil, collect(d.errs)
	}
	cfg.Warnings = d.warn
	cfg.EnvValues = append(cfg.EnvValues, d.envValues...)
	return cfg, nil
}

// authToken says where the bearer token comes from: server.auth_token when
// set and not empty, else the environment variable EnvToken.
//
// With server.auth there is no token: server.auth_token is an error, since
// a shared token is a principal with no person behind it, which would walk
// past everything that binds runs and decisions to people; EnvToken is
// only ignored (with a warning), since it is often set for other servers
// and ignoring it grants nothing (its value stays a secret).
func (d *decoder) authToken(cfg *Config, lookup func(string) (string, bool)) {
	s := &cfg.Server
	s.AuthToken = strings.TrimSpace(s.AuthToken)
	env, _ := lookup(EnvToken)
	env = strings.TrimSpace(env)
	switch {
	case s.Auth != nil && s.AuthToken != "":
		d.errAt(d.at["server.auth_token"], "server.auth_token", "server.auth_token and server.auth do not go together: with server.auth.issuer every client signs in through the issuer, and a shared token would be nobody in particular; remove one")
	case s.Auth != nil && env != "":
		d.warnAt(d.at["server.auth"], "server.auth", EnvToken+" is set and is not used: with server.auth every client signs in through the issuer")
		cfg.EnvValues = append(cfg.EnvValues, env)
	case s.AuthToken == "":
		cfg.tokenFromEnv(lookup)
	default:
		s.AuthTokenFrom = "server.auth_token"
		if d.file != "" {
			s.AuthTokenFrom += " in " + d.file
		}
		if env != "" && env != s.AuthToken {
			d.warnAt(d.at["server.auth_token"], "server.auth_token", fmt.Sprintf("%s is set too, to another token, and is not used: server.auth_token wins", EnvToken))
		}
	}
}

// syntaxError converts a parser error into an *Error at its position.
func (d *decoder) syntaxError(err error) error {
	var ye interface {
		GetToken() *token.Token
		GetMessage() string
	}
	if errors.As(err, &ye) {
		p := tokPos(ye.GetToken())
		return &Error{File: d.file, Line: p.line, Column: p.col, Msg: "YAML syntax error: " + ye.GetMessage()}
	}
	return &Error{File: d.file, Msg: "YAML syntax error: " + err.Error()}
}

// document returns the root node of the single document in f (an empty
// mapping for an empty file).
func (d *decoder) document(f *ast.File) *node {
	bodies := slices.DeleteFunc(slices.Clone(f.Docs), func(doc *ast.DocumentNode) bool { return doc == nil || doc.Body == nil })
	if len(bodies) == 0 {
		return &node{kind: mapNode}
	}
	if len(bodies) > 1 {
		d.errAt(nodePos(bodies[1].Body), "", "a configuration file holds one YAML document; found another here")
	}
	d.anchors = map[string]*node{}
	root := d.convert(bodies[0].Body, "", 0)
	if root.kind != mapNode && root.kind != nullNode {
		d.typeErr(root, "", "a mapping at the top (server, store, sandbox, approvals, connectors)")
	}
	return root
}

// workspaceFolder is VS Code's ${workspaceFolder} for a file in dir: the
// parent of .vscode (or .cursor), else dir itself.
func workspaceFolder(dir string) string {
	if dir == "" {
		dir, _ = os.Getwd()
		return dir
	}
	switch filepath.Base(dir) {
	case ".vscode", ".cursor":
		return filepath.Dir(dir)
	}
	return dir
}

// resolvePath makes p absolute against the config file's directory; "~/"
// means the home directory. Without a file, p is left relative.
func (d *decoder) resolvePath(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	if p == "" || filepath.IsAbs(p) || d.dir == "" {
		return p
	}
	return filepath.Join(d.dir, p)
}

// warnOpenListener warns about a network listener that anyone can reach:
// one beyond loopback with no token (from the file or the environment)
// and no server.auth.
func (d *decoder) warnOpenListener(s Server) {
	if s.Transport == "stdio" || s.AuthToken != "" || s.Auth != nil {
		return
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return
	}
	d.warnAt(d.at["server.addr"], "server.addr", fmt.Sprintf("%s listens beyond loopback without auth_token: serve refuses to start unless given --insecure-no-auth (anyone who can reach it could run programs)", s.Addr))
}

// maxTokens and maxKeys bound a file's tokens and its keys (in all its
// mappings) before the YAML parser sees them: its time grows with the
// tokens, and with the square of the keys of one mapping (a 256 KiB
// mapping of one-line keys took 39 s, a 4 MiB one would take hours).
// Configurations hold a few hundred of each.
const (
	maxTokens = 1 << 16
	maxKeys   = 1 << 12
)

// tooComplex returns the first token past a bound of the file, and what
// the file holds too much of, or nil: more than maxTokens tokens, more
// than maxKeys keys, or a token nested deeper than maxDepth in flow
// collections ([ and {) and block entries written on one line ("- - -").
// Comments are not counted (the parser passes over them). The parser
// takes time quadratic in the depth too (a 4 MiB file of "["
// would take hours); convert's bound (in node.go) then covers what
// the depth count misses, indentation, which the file's size bounds (a
// file of 4 MiB nested by indentation alone takes about a second).
func tooComplex(tokens token.Tokens) (*token.Token, string) {
	flow, line, onLine, keys, n := 0, 0, 0, 0, 0
	for _, tk := range tokens {
		if tk.Type == token.CommentType {
			continue
		}
		if n++; n > maxTokens {
			return tk, fmt.Sprintf("more than %d YAML tokens (names, values, punctuation): a configuration holds a few thousand; is this the right file?", maxTokens)
		}
		if tk.Position.Line != line {
			line, onLine = tk.Position.Line, 0
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow--
		case token.SequenceEntryType, token.MappingKeyType:
			onLine++
		case token.MappingValueType:
			if keys++; keys > maxKeys {
				return tk, fmt.Sprintf("more than %d keys: a configuration holds a few hundred; is this the right file?", maxKeys)
			}
			continue
		default:
			continue
		}
		if flow+onLine > maxDepth {
			return tk, fmt.Sprintf("nesting deeper than %d levels", maxDepth)
		}
	}
	return nil, ""
}
