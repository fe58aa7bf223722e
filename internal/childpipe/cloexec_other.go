//go:build !unix

package childpipe

// closeOnExec does nothing: Windows passes a child only the handles
// os/exec names.
func closeOnExec() {}
