package codemode

import (
	"errors"
	"testing"
)

func TestTransitionsUsedByTheEngineAreLegal(t *testing.T) {
	entry := [][2]EntryState{
		{0, EntryExecuting}, {0, EntryPending}, {EntryPending, EntryExecuting}, {EntryPending, EntryRejected},
		{EntryExecuting, EntryApplied}, {EntryExecuting, EntryError}, {EntryApplied, EntryReverted},
		{0, EntrySignIn}, {EntryExecuting, EntrySignIn}, {EntrySignIn, EntryExecuting}, {EntrySignIn, EntryPending}, {EntrySignIn, EntryRejected},
	}
	for _, m := range entry {
		if _, err := Transition(m[0], m[1]); err != nil {
			t.Errorf("Transition(%s, %s): %v", m[0], m[1], err)
		}
	}
	for _, m := range [][2]EntryState{{EntryRejected, EntryExecuting}, {EntryApplied, EntrySignIn}, {EntrySignIn, EntryApplied}, {EntryPending, EntrySignIn}} {
		if _, err := Transition(m[0], m[1]); !errors.Is(err, ErrIllegalTransition) {
			t.Errorf("%s -> %s allowed: %v", m[0], m[1], err)
		}
	}
}

func TestCancelledIsTerminalAndRollsBack(t *testing.T) {
	for _, m := range [][2]ExecStatus{{StatusRunning, StatusCancelled}, {StatusPaused, StatusCancelled}, {StatusCancelled, StatusRollingBack}} {
		if _, err := TransitionExec(m[0], m[1]); err != nil {
			t.Errorf("TransitionExec(%s, %s): %v", m[0], m[1], err)
		}
	}
	for _, m := range [][2]ExecStatus{{StatusCancelled, StatusRunning}, {StatusCancelled, StatusPaused}, {StatusCompleted, StatusCancelled}, {StatusRollingBack, StatusCancelled}, {0, StatusCancelled}} {
		if _, err := TransitionExec(m[0], m[1]); !errors.Is(err, ErrIllegalTransition) {
			t.Errorf("%s -> %s allowed: %v", m[0], m[1], err)
		}
	}
	if !StatusCancelled.Terminal() || StatusCancelled.Claimed() {
		t.Errorf("cancelled: Terminal %v, Claimed %v; want a terminal status nobody claims", StatusCancelled.Terminal(), StatusCancelled.Claimed())
	}
	if s, err := ParseExecStatus("cancelled"); err != nil || s != StatusCancelled {
		t.Errorf(`ParseExecStatus("cancelled") = %v, %v`, s, err)
	}
}

func TestWaitingForADownstreamTask(t *testing.T) {
	for _, m := range [][2]EntryState{{EntryExecuting, EntryWaiting}, {EntryWaiting, EntryApplied}, {EntryWaiting, EntryError}, {EntryWaiting, EntryUnknown}} {
		if _, err := Transition(m[0], m[1]); err != nil {
			t.Errorf("Transition(%s, %s): %v", m[0], m[1], err)
		}
	}
	for _, m := range [][2]EntryState{{0, EntryWaiting}, {EntryPending, EntryWaiting}, {EntryWaiting, EntryExecuting}, {EntryWaiting, EntryRejected}} {
		if _, err := Transition(m[0], m[1]); !errors.Is(err, ErrIllegalTransition) {
			t.Errorf("%s -> %s allowed: %v", m[0], m[1], err)
		}
	}
	for _, m := range [][2]ExecStatus{{StatusRunning, StatusWaiting}, {StatusWaiting, StatusRunning}, {StatusWaiting, StatusCancelled}, {StatusWaiting, StatusError}} {
		if _, err := TransitionExec(m[0], m[1]); err != nil {
			t.Errorf("TransitionExec(%s, %s): %v", m[0], m[1], err)
		}
	}
	for _, m := range [][2]ExecStatus{{StatusPaused, StatusWaiting}, {StatusWaiting, StatusPaused}, {StatusWaiting, StatusCompleted}, {StatusWaiting, StatusRollingBack}} {
		if _, err := TransitionExec(m[0], m[1]); !errors.Is(err, ErrIllegalTransition) {
			t.Errorf("%s -> %s allowed: %v", m[0], m[1], err)
		}
	}
	if StatusWaiting.Terminal() || !StatusWaiting.Claimed() || EntryWaiting.AwaitsPerson() {
		t.Error("waiting: a run its watcher claims that is not over, an entry that waits for no person")
	}
	if s, err := ParseExecStatus("waiting"); err != nil || s != StatusWaiting {
		t.Errorf(`ParseExecStatus("waiting") = %v, %v`, s, err)
	}
}

// The zero state and kind, what a log entry the store cannot decode
// holds, read as unreadable; no stored text reads as them.
func TestTheZeroEntryStateReadsAsUnreadable(t *testing.T) {
	if got, kind := EntryState(0).String(), EntryKind(0).String(); got != "unreadable" || kind != "unreadable" {
		t.Errorf("the zero state and kind read %q and %q, want unreadable", got, kind)
	}
	if st, err := ParseEntryState("unreadable"); err == nil {
		t.Errorf(`ParseEntryState("unreadable") = %v, want an error`, st)
	}
	var k EntryKind
	if err := k.UnmarshalText([]byte("unreadable")); err == nil {
		t.Error(`EntryKind.UnmarshalText("unreadable") succeeded, want an error`)
	}
	if got := ExecStatus(0).String(); got != "codemode.ExecStatus(0)" {
		t.Errorf("the zero status reads %q", got)
	}
}
