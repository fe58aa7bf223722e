package catalog

import (
	"cmp"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/tokens"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// Declarations returns the TypeScript declarations of one connector, of
// the connectors in a namespace ("mcp" for mcp.a and mcp.b), or with
// connector "" of every available connector preceded by the codemode
// global's own declaration (Options.Codemode).
func (c *Catalog) Declarations(connector string) (string, error) {
	if connector == "" {
		return c.decls().Text, nil
	}
	s := c.byName[connector]
	if ns := c.inNamespace(connector); s == nil && len(ns) > 0 {
		// One file, as for the whole catalog.
		return typegen.Generate(typegenConnectors(ns)).Text, nil
	}
	if s == nil {
		names := make([]string, 0, len(c.connectors))
		for _, s := range c.connectors {
			names = append(names, s.Name)
		}
		return "", fmt.Errorf("unknown connector %q; connectors: %s", connector, ListOrNone(Nearest(connector, names, len(names))))
	}
	if !s.Available() {
		return "", fmt.Errorf("connector %s is unavailable: %v", connector, s.Err)
	}
	return s.decls(), nil
}

// declarations makes the declarations of every available connector, once
// per catalog (a catalog does not change).
func (c *Catalog) declarations() typegen.Result {
	cs := typegenConnectors(c.connectors)
	if len(cs) == 0 {
		return typegen.Result{Text: c.opts.Codemode}
	}
	// One file: type names stay unique across connectors and apart from
	// the codemode global's.
	res := typegen.Generate(cs, codemodeTypeNames...)
	res.Text = c.opts.Codemode + "\n" + res.Text
	return res
}

// TypeDiagnostics reports what the declarations of the available
// connectors do not express exactly (see typegen.Diagnostic), connector
// by connector.
func (c *Catalog) TypeDiagnostics() []typegen.Diagnostic { return c.decls().Diagnostics }

// typegenConnectors converts the available connectors of conns for the
// declaration generator.
func typegenConnectors(conns []*Connector) []typegen.Connector {
	var cs []typegen.Connector
	for _, s := range conns {
		if s.Available() {
			cs = append(cs, s.typegen())
		}
	}
	return cs
}

// typegen converts a connector for the declaration generator.
func (s *Connector) typegen() typegen.Connector {
	c := typegen.Connector{Name: s.Name, Description: s.Description, Definitions: s.shared(), Methods: make([]connectors.Tool, 0, len(s.Methods))}
	for _, t := range s.Methods {
		c.Methods = append(c.Methods, t.Def)
	}
	return c
}

// description is the method's description, else its title.
func (t *Method) description() string { return cmp.Or(t.Def.Description, t.Def.Title) }

// DeclarationsWithin returns Declarations("") when its estimated size in
// tokens (internal/tokens) is at most budget; fits is false when it is
// larger. A catalog that cannot fit (a lower bound of its declarations'
// size is past budget) is not generated, so asking costs little whatever
// the number of methods.
func (c *Catalog) DeclarationsWithin(budget int) (decls string, fits bool) {
	// A token covers at most maxBytesPerToken bytes.
	const maxBytesPerToken = 12
	least := len(c.opts.Codemode)
	for _, s := range c.connectors {
		if s.Available() {
			least += s.leastDeclarations()
		}
		if least > budget*maxBytesPerToken {
			return "", false
		}
	}
	d := c.decls().Text
	if tokens.Estimate(d) > budget {
		return "", false
	}
	return d, true
}

// leastDeclarations is a lower bound of the size in bytes of the
// connector's declarations: "declare const NAME: {\n};\n" and per method
// "  NAME(input: T): Promise<T>;\n".
func (s *Connector) leastDeclarations() int {
	n := len(s.Name) + 20
	for _, t := range s.Methods {
		n += len(t.Def.Name) + 30
	}
	return n
}
