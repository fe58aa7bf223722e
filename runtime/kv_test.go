package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// kv is a native test connector: an in-memory key/value map whose put needs
// approval (and reverts natively), add does not (and reverts natively),
// and whose calls, reverts and disposals are counted.
type kv struct {
	name  string
	extra string // changes put's input schema, to simulate a connector upgrade

	mu         sync.Mutex
	data       map[string]string
	calls      map[string]int                               // by tool
	disposed   map[string]int                               // by execution id
	reverted   []string                                     // keys, in revert order
	revertFail map[string]bool                              // keys whose revert fails
	callErr    map[string]error                             // tool -> transport error
	hook       func(ctx context.Context, tool string) error // called by Call after counting it, if set
	noRevert   map[string]bool                              // tools whose calls cannot be reverted (of put and add)
	// noopWrites, set before use, drops noop's read-only annotation (a
	// cheap call that is written ahead, for benchmarks).
	noopWrites bool
}

func newKV(name string) *kv {
	return &kv{
		name:       name,
		data:       map[string]string{},
		calls:      map[string]int{},
		disposed:   map[string]int{},
		revertFail: map[string]bool{},
		noRevert:   map[string]bool{},
		callErr:    map[string]error{},
	}
}

var _ connectors.Connector = (*kv)(nil)

func (k *kv) Name() string { return k.name }
func (k *kv) Close() error { return nil }

func (k *kv) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{Description: "An in-memory key/value store for tests.", Reverter: k, Disposer: k}
}

func (k *kv) Tools(context.Context) ([]connectors.Tool, error) {
	putProps := `"key":{"type":"string","minLength":1},"value":{"type":"string"}`
	if k.extra != "" {
		putProps += `,"` + k.extra + `":{"type":"string"}`
	}
	ro, noopRO := true, !k.noopWrites
	return []connectors.Tool{
		{Name: "get", SourceName: "get", Description: "Reads the value of a key.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"value":{"type":["string","null"]}}}`),
			Annotations:  connectors.Annotations{ReadOnly: &ro}},
		{Name: "put", SourceName: "put", Description: "Sets a key to a value, returning the previous value.", RequiresApproval: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{` + putProps + `},"required":["key","value"],"additionalProperties":false}`)},
		{Name: "add", SourceName: "add", Description: "Adds a key without asking.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"value":{"type":"string"}},"required":["key"]}`)},
		{Name: "fail", SourceName: "fail", Description: "Always fails.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}}}`)},
		{Name: "noop", SourceName: "noop", Description: "Does nothing, cheaply.",
			InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: connectors.Annotations{ReadOnly: &noopRO}},
	}, nil
}

func (k *kv) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	var a struct{ Key, Value, Reason string }
	if err := json.Unmarshal(args, &a); err != nil {
		return connectors.Result{}, fmt.Errorf("kv: bad args: %w", err)
	}
	k.mu.Lock()
	k.calls[tool]++
	k.mu.Unlock()
	if k.hook != nil {
		if err := k.hook(ctx, tool); err != nil {
			return connectors.Result{}, err
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.callErr[tool]; err != nil {
		return connectors.Result{}, err
	}
	switch tool {
	case "get":
		v, ok := k.data[a.Key]
		var val any = v
		if !ok {
			val = nil
		}
		return jsonResult(map[string]any{"key": a.Key, "value": val}), nil
	case "put", "add":
		prev, had := k.data[a.Key]
		k.data[a.Key] = a.Value
		var p any = prev
		if !had {
			p = nil
		}
		return jsonResult(map[string]any{"key": a.Key, "previous": p}), nil
	case "fail":
		return connectors.Result{IsError: true, Message: "kv failed: " + a.Reason}, nil
	case "noop":
		return connectors.Result{Value: json.RawMessage(`{}`)}, nil
	}
	return connectors.Result{}, fmt.Errorf("kv: %w %q", connectors.ErrUnknownTool, tool)
}

func (k *kv) Revertible(tool string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return (tool == "put" || tool == "add") && !k.noRevert[tool]
}

func (k *kv) Revert(_ context.Context, tool string, args, result json.RawMessage) error {
	var a struct{ Key string }
	var r struct{ Previous *string }
	if err := json.Unmarshal(args, &a); err != nil {
		return err
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.revertFail[a.Key] {
		return errors.New("kv: cannot revert " + a.Key)
	}
	if r.Previous == nil {
		delete(k.data, a.Key)
	} else {
		k.data[a.Key] = *r.Previous
	}
	k.reverted = append(k.reverted, a.Key)
	return nil
}

func (k *kv) DisposeExecution(_ context.Context, id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.disposed[id]++
	return nil
}

// blockAt makes the call of tool (one call) wait until release is
// closed; entered is closed once it waits. It sets k.hook, before use.
func (k *kv) blockAt(tool string) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	k.hook = func(_ context.Context, called string) error {
		if called == tool {
			close(entered)
			<-release
		}
		return nil
	}
	return entered, release
}

func (k *kv) count(tool string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls[tool]
}

func (k *kv) get(key string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.data[key]
	return v, ok
}

func (k *kv) disposals(id string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.disposed[id]
}

func (k *kv) revertedKeys() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.reverted...)
}

func jsonResult(v any) connectors.Result {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return connectors.Result{Value: b}
}
