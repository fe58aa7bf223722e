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
