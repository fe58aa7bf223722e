package sqlstore

import "testing"

func TestStatusLiteral(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"completed", "'completed'", true},
		{"rolled_back", "'rolled_back'", true},
		{"", "", false},
		{"x'); DROP TABLE executions; --", "", false},
		{"Completed", "", false},
	}
	for _, tt := range tests {
		got, err := statusLiteral(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("statusLiteral(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestTerminalIn(t *testing.T) {
	if want := "('completed', 'error', 'rejected', 'cancelled', 'rolled_back')"; terminalIn != want {
		t.Errorf("terminalIn = %s, want %s", terminalIn, want)
	}
}
