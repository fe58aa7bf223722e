package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// The bounds of what a snippet is saved with (README, Snippets): a
// snippet's name (catalog.CheckSnippetName), description and input schema
// are in every search, the describe of snippets and the console, for every
// later run; the request that saves one is bounded only as a whole.
const (
	maxSnippetDescription = 4 << 10
	maxSnippetSchema      = 64 << 10
)

// maxSnippetRuns bounds the codemode.run calls of a pass. The lookup of
// a snippet's code is no call of the log, so Limits.MaxCalls does not
// count it, and a snippet that runs itself would otherwise go on until
// the pass's timeout (30 minutes for a task), holding each level.
const maxSnippetRuns = 1000

// Snippets lists saved snippets by name.
func (r *Runtime) Snippets(ctx context.Context) ([]codemode.Snippet, error) {
	list, err := r.store.ListSnippets(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	return list, nil
}

// Snippet returns the saved snippet called name; ErrUnknownSnippet if
// there is none.
func (r *Runtime) Snippet(ctx context.Context, name string) (*codemode.Snippet, error) {
	s, err := r.snippets.Get(ctx, name)
	if errors.Is(err, codemode.ErrNotFound) {
		return nil, refusal(codemode.ErrUnknownSnippet, "unknown snippet %q", short.Clip(name, catalog.MaxSnippetName))
	}
	if err != nil {
		return nil, fmt.Errorf("load snippet %s: %w", short.Clip(name, catalog.MaxSnippetName), err)
	}
	return s, nil
}

// SnippetStamps lists saved snippets by name, with only their names and
// when each was last saved (codemode.Store.SnippetStamps).
func (r *Runtime) SnippetStamps(ctx context.Context) ([]codemode.Snippet, error) {
	list, err := r.store.SnippetStamps(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	return list, nil
}

// SaveSnippet saves the code of a completed execution under name (replacing
// a snippet of that name), runnable with codemode.run(name, input). The
// snippet records the connectors the run used. inputSchema, when given, must
// be a JSON Schema; it documents the input in describe and search.
func (r *Runtime) SaveSnippet(ctx context.Context, name, executionID, description string, inputSchema json.RawMessage) (codemode.Snippet, error) {
	if err := catalog.CheckSnippetName(name); err != nil {
		return codemode.Snippet{}, err
	}
	switch {
	case len(description) > maxSnippetDescription:
		return codemode.Snippet{}, fmt.Errorf("snippet %s: description is %d bytes; at most %d", name, len(description), maxSnippetDescription)
	case len(inputSchema) > maxSnippetSchema:
		return codemode.Snippet{}, fmt.Errorf("snippet %s: input schema is %d bytes; at most %d", name, len(inputSchema), maxSnippetSchema)
	}
	if len(inputSchema) > 0 {
		canon, _, err := jsonref.Canonical(inputSchema)
		if err != nil {
			return codemode.Snippet{}, fmt.Errorf("snippet %s: input schema is not JSON: %w", name, err)
		}
		if _, err := schemacheck.CompileJSON(canon); err != nil {
			return codemode.Snippet{}, fmt.Errorf("snippet %s: input schema is not a valid JSON Schema: %w", name, err)
		}
		inputSchema = canon
	}
	e, err := r.seen(ctx, executionID, ownRun)
	if err != nil {
		return codemode.Snippet{}, err
	}
	if e.Status != codemode.StatusCompleted {
		return codemode.Snippet{}, wrongState("execution %s %s; only a completed execution can be saved as a snippet", executionID, inState(e.Status))
	}
	s := codemode.Snippet{
		Name:          name,
		Description:   description,
		Code:          e.Code,
		InputSchema:   inputSchema,
		FromExecution: executionID,
		CreatedAt:     r.now(),
		Connectors:    slices.Sorted(maps.Keys(e.Connectors)),
	}
	if err := r.store.SaveSnippet(ctx, s); err != nil {
		return codemode.Snippet{}, fmt.Errorf("save snippet %s: %w", name, err)
	}
	return s, nil
}

// DeleteSnippet deletes a snippet; ErrUnknownSnippet if there is none.
func (r *Runtime) DeleteSnippet(ctx context.Context, name string) error {
	err := r.store.DeleteSnippet(ctx, name)
	if errors.Is(err, codemode.ErrNotFound) {
		return refusal(codemode.ErrUnknownSnippet, "unknown snippet %q", name)
	}
	if err != nil {
		return fmt.Errorf("delete snippet %s: %w", name, err)
	}
	return nil
}

// snippetCode returns a snippet's code for codemode.run; the error is thrown
// into the program: an unknown name lists the nearest saved ones, a snippet
// whose connectors are gone names them, an input that does not satisfy the
// snippet's input schema lists every violation with its JSON pointer.
func (r *Runtime) snippetCode(ctx context.Context, name string, input json.RawMessage) (string, error) {
	s, err := r.snippets.Get(ctx, name)
	if errors.Is(err, codemode.ErrNotFound) {
		all, lerr := r.store.SnippetStamps(ctx) // (the names, not the code)
		if lerr != nil {
			return "", fmt.Errorf("unknown snippet %q", short.Clip(name, catalog.MaxSnippetName))
		}
		names := make([]string, len(all))
		for i, s := range all {
			names[i] = s.Name
		}
		return "", fmt.Errorf("unknown snippet %q; saved snippets: %s", short.Clip(name, catalog.MaxSnippetName), catalog.ListOrNone(catalog.Nearest(name, names, 5)))
	}
	if err != nil {
		return "", fmt.Errorf("load snippet %s: %w", name, err)
	}
	var gone []string
	for _, c := range s.Connectors {
		if src := r.catalog().Connector(c); src == nil || !src.Available() {
			gone = append(gone, c)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		return "", fmt.Errorf("snippet %s uses connectors that are not available: %s", name, catalog.ListOrNone(gone))
	}
	if len(s.InputSchema) > 0 {
		if err := validateSnippetInput(*s, input); err != nil {
			return "", err
		}
	}
	return s.Code, nil
}

// validateSnippetInput checks codemode.run's input (JSON; null when none
// was given) against the snippet's input schema, which SaveSnippet checked.
func validateSnippetInput(s codemode.Snippet, input json.RawMessage) error {
	sch, err := schemacheck.CompileJSON(s.InputSchema)
	if err != nil {
		return fmt.Errorf("snippet %s: input schema: %w", s.Name, err)
	}
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	inst, err := jsonref.Decode(input)
	if err != nil {
		return fmt.Errorf("snippet %s: input is not JSON: %w", s.Name, err)
	}
	return schemacheck.Validate(sch, fmt.Sprintf("input for snippet %s", s.Name), inst)
}
