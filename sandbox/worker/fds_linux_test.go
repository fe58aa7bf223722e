package worker

import (
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// A worker gets its standard streams and its two pipes (fds 3 and 4), and
// no other descriptor of the server's, not even one the server holds
// without close-on-exec (inherited from whatever started it, say).
func TestAWorkerGetsOnlyItsDescriptors(t *testing.T) {
	leaked := fixture.LeakDescriptor(t)
	pool := newPool(t, Options{Size: 1})
	waitIdle(t, pool, 1)
	for _, pid := range pool.Stats().PIDs {
		files := fixture.OpenFiles(t, pid)
		for fd, target := range files {
			if target == leaked {
				t.Errorf("worker %d holds descriptor %d: %s", pid, fd, target)
			}
		}
		for _, fd := range []int{3, 4} {
			if !strings.HasPrefix(files[fd], "pipe:") {
				t.Errorf("worker %d's descriptor %d is %q, want its pipe", pid, fd, files[fd])
			}
		}
	}
}
