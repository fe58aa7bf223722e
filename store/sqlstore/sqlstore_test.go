package sqlstore

import "testing"

// TestTerminalIn pins the terminal statuses written into the statements
// as SQL literals: a name that needed quoting would fail it.
func TestTerminalIn(t *testing.T) {
	if want := "('completed', 'error', 'rejected', 'cancelled', 'rolled_back')"; terminalIn != want {
		t.Errorf("terminalIn = %s, want %s", terminalIn, want)
	}
}
