// Package childpipe starts a child process with a pair of pipes to talk to
// it, closing every end that is not ours whatever happens.
package childpipe

import (
	"fmt"
	"os"
	"os/exec"
)

// Start creates two pipes, lets attach hand the child's ends to cmd (as
// Stdin/Stdout or ExtraFiles), starts cmd and closes the child's ends in
// this process. It returns the parent's ends: toChild to write what the
// child reads, fromChild to read what the child writes. On error nothing is
// left open. The child gets no other descriptor of this process than
// those cmd names (see closeOnExec).
func Start(cmd *exec.Cmd, attach func(childIn, childOut *os.File)) (toChild, fromChild *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, fmt.Errorf("pipe: %w", err)
	}
	attach(inR, outW)
	closeOnExec()
	err = cmd.Start()
	// The child has its own copies of these ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, err
	}
	return inW, outR, nil
}
