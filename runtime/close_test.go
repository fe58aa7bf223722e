package runtime_test

import (
	"errors"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Close waits for an in-flight pass and refuses new requests.
func TestCloseWaitsForInFlightPasses(t *testing.T) {
	e := newEnv(t, setup{})
	entered, release := e.kv.blockAt("add")
	ran := make(chan codemode.Outcome, 1)
	go func() {
		o, err := e.rt.Execute(e.ctx, `async () => kv.add({ key: "slow" })`, nil)
		if err != nil {
			t.Errorf("Execute: %v", err)
		}
		ran <- o
	}()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- e.rt.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a pass was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	mustStatus(t, <-ran, codemode.StatusCompleted)
	if _, err := e.rt.Execute(e.ctx, `async () => 1`, nil); !errors.Is(err, codemode.ErrClosed) {
		t.Errorf("Execute after Close: err = %v, want ErrClosed", err)
	}
}
