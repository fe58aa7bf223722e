package procid

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestSelfIsAlive(t *testing.T) {
	s := Self()
	if s.PID != os.Getpid() || s.Host == "" {
		t.Fatalf("Self() = %+v", s)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if s.Boot == "" || s.Start == "" {
		t.Fatalf("Self() = %+v, want a boot and a start time on Linux", s)
	}
	if alive, known := Alive(s); !alive || !known {
		t.Errorf("Alive(Self()) = %v, %v; want true, true", alive, known)
	}
}

func TestAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("liveness by process id is implemented on Linux only; elsewhere owners are recovered by lease")
	}
	s := Self()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited := s
	exited.PID, exited.Start = cmd.Process.Pid, "1"
	reused := s
	reused.Start = "1" // this process's id, but another start time
	elsewhere := s
	elsewhere.Host = "another-host"
	otherNS := s
	otherNS.Boot = "another-boot/pid:[1]"
	// An owner record is read from the store: a PID past what the system
	// counts would be cut to another process's (1 << 32 | 1 is init's).
	tooLarge := s
	tooLarge.PID, tooLarge.Start = 1<<32|1, "1"
	// kill(2) with 0 or a negative id signals a group (-1: every
	// process), so it would always find one alive.
	zero, negative, all := s, s, s
	zero.PID, negative.PID, all.PID = 0, -os.Getpid(), -1
	tests := []struct {
		name         string
		id           Identity
		alive, known bool
	}{
		{"this process", s, true, true},
		{"an exited process", exited, false, true},
		{"a reused id", reused, false, true},
		{"another host", elsewhere, false, false},
		{"another namespace", otherNS, false, false},
		{"a PID no process can have", tooLarge, false, false},
		{"PID 0", zero, false, false},
		{"a process group", negative, false, false},
		{"PID -1", all, false, false},
	}
	for _, tt := range tests {
		if alive, known := Alive(tt.id); alive != tt.alive || known != tt.known {
			t.Errorf("%s: Alive = %v, %v; want %v, %v", tt.name, alive, known, tt.alive, tt.known)
		}
	}
}
