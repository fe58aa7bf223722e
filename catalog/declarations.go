package runtime

import (
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/internal/tokens"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// Declarations returns the TypeScript declarations of one connector, of
// the connectors in a namespace ("mcp" for mcp.a and mcp.b), or with
// connector "" of every available connector preceded by the codemode
// global's own declaration.
func (r *Runtime) Declarations(connector string) (string, error) {
	cat := r.catalog()
	if connector != "" {
		s := cat.byName[connector]
		if ns := cat.inNamespace(connector); s == nil && len(ns) > 0 {
			return namespaceDeclarations(ns), nil
		}
		if s == nil {
			names := make([]string, 0, len(cat.sources))
			for _, s := range cat.sources {
				names = append(names, s.name)
			}
			return "", fmt.Errorf("unknown connector %q; connectors: %s", connector, listOrNone(nearest(connector, names, len(names))))
		}
		if !s.available() {
			return "", fmt.Errorf("connector %s is unavailable: %v", connector, s.err)
		}
		return s.declarations(), nil
	}
	return cat.declarations(), nil
}

// declarations returns the declarations of every available connector,
// made once per catalog (a catalog does not change).
func (c *catalog) declarations() string {
	c.declOnce.Do(func() {
		var cs []typegen.Connector
		for _, s := range c.sources {
			if s.available() {
				cs = append(cs, s.typegen())
			}
		}
		if len(cs) == 0 {
			c.decls = codemodeDeclaration
			return
		}
		// One file: type names stay unique across connectors and apart
		// from the codemode global's.
		res := typegen.Generate(cs, typegen.Options{Reserved: codemodeTypeNames})
		c.decls = codemodeDeclaration + "\n" + res.Text
		c.diags = res.Diagnostics
	})
	return c.decls
}

// TypeDiagnostics reports what the declarations of the available
// connectors do not express exactly (see typegen.Diagnostic), connector
// by connector.
func (r *Runtime) TypeDiagnostics() []typegen.Diagnostic {
	cat := r.catalog()
	cat.declarations()
	return cat.diags
}

// namespaceDeclarations returns the declarations of the available sources
// of one namespace, as one file.
func namespaceDeclarations(ns []*source) string {
	var cs []typegen.Connector
	for _, s := range ns {
		if s.available() {
			cs = append(cs, s.typegen())
		}
	}
	return typegen.DeclarationsAll(cs)
}

// declarations returns the source's declarations, made once.
func (s *source) declarations() string {
	s.declOnce.Do(func() { s.decls = typegen.Declarations(s.typegen()) })
	return s.decls
}

// typegen converts a source for the declaration generator.
func (s *source) typegen() typegen.Connector {
	c := typegen.Connector{Name: s.name, Description: s.description, Definitions: s.typeDefs()}
	for _, t := range s.tools {
		c.Methods = append(c.Methods, t.typegen())
	}
	return c
}

func (t *tool) typegen() typegen.Method {
	desc := t.def.Description
	if desc == "" {
		desc = t.def.Title
	}
	return typegen.Method{
		Name:             t.def.Name,
		Description:      desc,
		Input:            t.def.InputSchema,
		Output:           t.def.OutputSchema,
		RequiresApproval: t.def.RequiresApproval,
		Deprecated:       t.def.Deprecated,
	}
}

// DeclarationsWithin returns Declarations("") when its estimated size in
// tokens (internal/tokens) is at most budget; fits is false when it is
// larger. A catalog that cannot fit (a lower bound of its declarations'
// size is past budget) is not generated, so asking costs little whatever
// the number of methods.
func (r *Runtime) DeclarationsWithin(budget int) (decls string, fits bool) {
	cat := r.catalog()
	// Bytes of the declarations, at least: "declare const NAME: {\n};\n"
	// and per method "  NAME(input: T): Promise<T>;\n". A token covers at
	// most maxBytesPerToken of them.
	const maxBytesPerToken = 12
	least := len(codemodeDeclaration)
	for _, s := range cat.sources {
		if !s.available() {
			continue
		}
		least += len(s.name) + 20
		for _, t := range s.tools {
			least += len(t.def.Name) + 30
		}
		if least > budget*maxBytesPerToken {
			return "", false
		}
	}
	d, err := r.Declarations("")
	if err != nil || tokens.Estimate(d) > budget {
		return "", false
	}
	return d, true
}
