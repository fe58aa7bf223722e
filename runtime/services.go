package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// A service is a host-backed function of the sandbox's codemode global
// (sandbox.Service): its parameters, which the sandbox checks, its answer,
// which the log keeps, and its declaration (codemodeDeclaration: its doc,
// and the TypeScript of its answer's Go type). Adding one is its entry in
// services.
type service struct {
	catalog.Service // Doc is "" for codemode.run's lookup, which the sandbox declares
	answer          func(ctx context.Context, p *pass, args []json.RawMessage) (json.RawMessage, error)
}

// serviceOf is a service answered by f, whose value is the answer as JSON
// and whose result type is the one the declaration shows.
func serviceOf[T any](name, doc string, params []sandbox.Param, f func(ctx context.Context, p *pass, args []json.RawMessage) (T, error)) service {
	return service{Service: catalog.Service{Name: name, Params: params, Doc: doc, Result: reflect.TypeFor[T]()},
		answer: func(ctx context.Context, p *pass, args []json.RawMessage) (json.RawMessage, error) {
			return marshalAnswer(f(ctx, p, args))
		}}
}

// marshalAnswer is a service's answer as JSON.
func marshalAnswer[T any](v T, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// services are the codemode functions a program may call besides step,
// in the order the declaration lists them, and codemode.run's lookup of a
// snippet's source (sandbox.SnippetService).
var services = []service{
	serviceOf("search", "Find connectors, methods and snippets by what they do (\"merge a pull request\"), best first (at most 20); an empty query lists everything.",
		[]sandbox.Param{{Name: "query", String: true}},
		func(ctx context.Context, p *pass, args []json.RawMessage) (catalog.SearchAnswer, error) {
			return p.r.catalog().Search(ctx, p.r.snippets, stringArg(args, 0))
		}),
	serviceOf("describe", "The TypeScript declarations of a connector, method or snippet path, with a connector's groups and methods to browse; an unknown path throws an error naming the nearest ones.",
		[]sandbox.Param{{Name: "path", String: true}},
		func(ctx context.Context, p *pass, args []json.RawMessage) (*catalog.Description, error) {
			return p.r.catalog().Describe(ctx, p.r.snippets, stringArg(args, 0))
		}),
	// The source of a saved snippet, once input satisfies its input
	// schema; at most maxSnippetRuns per pass.
	serviceOf(sandbox.SnippetService, "", nil, func(ctx context.Context, p *pass, args []json.RawMessage) (string, error) {
		if p.snippetRuns.Add(1) > maxSnippetRuns {
			return "", fmt.Errorf("codemode.run: a run may run at most %d snippets per pass; does a snippet run itself?", maxSnippetRuns)
		}
		input := json.RawMessage("null")
		if len(args) > 1 {
			input = args[1]
		}
		return p.r.snippetCode(ctx, stringArg(args, 0), input)
	}),
}

// serviceList is what every Program offers, by name, and
// codemodeDeclaration the TypeScript of the sandbox's codemode global that
// declares them: the services but codemode.run's lookup, which the
// sandbox installs and declares itself.
var serviceList, codemodeDeclaration = func() ([]sandbox.Service, string) {
	var list []sandbox.Service
	var decl []catalog.Service
	for _, sv := range services {
		if sv.Name != sandbox.SnippetService {
			list = append(list, sandbox.Service{Name: sv.Name, Params: sv.Params})
			decl = append(decl, sv.Service)
		}
	}
	return list, catalog.CodemodeDeclaration(decl)
}()

// Service answers a codemode service (see services). A call with a
// sequence number (all but those inside a step's function) is logged like
// a read-only connector call, so a program that acts on what
// codemode.search found replays the same way after the connectors changed.
func (p *pass) Service(ctx context.Context, sc sandbox.ServiceCall) (json.RawMessage, error) {
	i := slices.IndexFunc(services, func(sv service) bool { return sv.Name == sc.Name })
	if i < 0 {
		return nil, fmt.Errorf("codemode.%s is not a service of this server", sc.Name)
	}
	sv := services[i]
	var a []json.RawMessage
	if err := json.Unmarshal(sc.Args, &a); err != nil {
		return nil, fmt.Errorf("codemode.%s: arguments: %w", sc.Name, err)
	}
	if sc.Seq == 0 {
		return sv.answer(ctx, p, a)
	}
	args, _, err := jsonref.Canonical(sc.Args)
	if err != nil {
		return nil, fmt.Errorf("codemode.%s: arguments: %w", sc.Name, err)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.inflight.Done()
	e, val, err := p.decideLocal(ctx, codemode.Entry{ExecutionID: p.run.ID, Seq: p.seqBase + sc.Seq, Kind: codemode.KindService, Connector: "codemode", Method: sc.Name, Args: args, Reverts: p.reverts})
	if e == nil {
		return val, err
	}
	switch val, err = sv.answer(ctx, p, a); {
	case err != nil && ctx.Err() != nil:
		// The pass was cancelled or timed out meanwhile: the entry stays
		// executing, and a replay answers it again.
		return nil, err
	case err != nil:
		return p.answerFailure(ctx, *e, err.Error())
	}
	return p.answerValue(ctx, *e, val)
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
