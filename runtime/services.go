package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// A service is a host-backed function of the sandbox's codemode global
// (sandbox.Service): its parameters, which the sandbox checks, and its
// answer. Adding one to the codemode global is its entry here and its
// TypeScript in codemodeDeclaration.
type service struct {
	params []sandbox.Param
	answer func(ctx context.Context, p *pass, args []json.RawMessage) (json.RawMessage, error)
}

// services are the codemode functions a program may call besides step,
// and codemode.run's lookup of a snippet's source (sandbox.SnippetService).
var services = map[string]service{
	"search": {
		params: []sandbox.Param{{Name: "query", String: true}},
		answer: func(ctx context.Context, p *pass, args []json.RawMessage) (json.RawMessage, error) {
			return p.r.Search(ctx, stringArg(args, 0))
		},
	},
	"describe": {
		params: []sandbox.Param{{Name: "path", String: true}},
		answer: func(ctx context.Context, p *pass, args []json.RawMessage) (json.RawMessage, error) {
			return p.r.Describe(ctx, stringArg(args, 0))
		},
	},
	sandbox.SnippetService: {
		// The source of a saved snippet, once input satisfies its input
		// schema.
		answer: func(ctx context.Context, p *pass, args []json.RawMessage) (json.RawMessage, error) {
			input := json.RawMessage("null")
			if len(args) > 1 {
				input = args[1]
			}
			code, err := p.r.snippetCode(ctx, stringArg(args, 0), input)
			if err != nil {
				return nil, err
			}
			return json.Marshal(code)
		},
	},
}

// serviceList is what every Program offers, by name: the services but
// codemode.run's lookup (the sandbox installs codemode.run itself).
var serviceList = func() []sandbox.Service {
	var out []sandbox.Service
	for _, name := range slices.Sorted(maps.Keys(services)) {
		if name != sandbox.SnippetService {
			out = append(out, sandbox.Service{Name: name, Params: services[name].params})
		}
	}
	return out
}()

// Service answers a codemode service (see services).
func (p *pass) Service(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	sv, ok := services[name]
	if !ok {
		return nil, fmt.Errorf("codemode.%s is not a service of this server", name)
	}
	var a []json.RawMessage
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("codemode.%s: arguments: %w", name, err)
	}
	return sv.answer(ctx, p, a)
}

// stringArg is argument i as a string ("" when it is missing or not one;
// the sandbox has checked the parameters it declares strings).
func stringArg(args []json.RawMessage, i int) string {
	var s string
	if i < len(args) {
		_ = json.Unmarshal(args[i], &s)
	}
	return s
}
