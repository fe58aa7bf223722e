package childpipe

import (
	"os"
	"os/exec"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// The child gets its standard streams and nothing else of ours, not even
// a descriptor we hold without close-on-exec (what it opens itself, cat
// its locale files, is its own business).
func TestTheChildGetsOnlyItsDescriptors(t *testing.T) {
	leaked := fixture.LeakDescriptor(t)
	cmd := exec.Command("cat")
	to, from, err := Start(cmd, func(in, out *os.File) { cmd.Stdin, cmd.Stdout = in, out })
	if err != nil {
		t.Fatal(err)
	}
	files := fixture.OpenFiles(t, cmd.Process.Pid)
	to.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	from.Close()
	for fd, target := range files {
		if target == leaked {
			t.Errorf("the child holds descriptor %d: %s", fd, target)
		}
	}
}
