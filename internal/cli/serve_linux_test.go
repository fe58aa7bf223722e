package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// openPTY opens a pseudo-terminal: its controlling side and the terminal
// a program reads (a person typing).
func openPTY(t *testing.T) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { control.Close() })
	if err := unix.IoctlSetPointerInt(int(control.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(control.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return control, term
}

// `serve` over stdio typed in a terminal says, on stderr, that it waits
// for an MCP client on stdin (else it just sits there); started by a
// client (stdin a pipe) it says nothing of the kind.
func TestServeInATerminalSaysItWaitsForAClient(t *testing.T) {
	cfg := notesConfig(t)
	control, term := openPTY(t)
	// Ctrl-D at the start of a line: the terminal's end of input, so that
	// serve ends once it has read it.
	if _, err := control.Write([]byte{4}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), []string{"serve", "--config", cfg}, cli.Env{Stdin: term, Stdout: &out, Stderr: &errb})
	if code != cli.ExitOK || !strings.Contains(errb.String(), "waits for an MCP client on stdin") {
		t.Fatalf("serve in a terminal: exit %d, stderr %q", code, errb.String())
	}
	code, _, errs := run(t, "", "serve", "--config", cfg)
	if code != cli.ExitOK || strings.Contains(errs, "MCP client on stdin") {
		t.Fatalf("serve from a pipe: exit %d, stderr %q", code, errs)
	}
}
