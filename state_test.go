package codemode

import (
	"errors"
	"testing"
)

func TestTransitionsUsedByTheEngineAreLegal(t *testing.T) {
	entry := [][2]EntryState{
		{0, EntryExecuting}, {0, EntryPending}, {EntryPending, EntryExecuting}, {EntryPending, EntryRejected},
		{EntryExecuting, EntryApplied}, {EntryExecuting, EntryError}, {EntryApplied, EntryReverted},
	}
	for _, m := range entry {
		if _, err := Transition(m[0], m[1]); err != nil {
			t.Errorf("Transition(%s, %s): %v", m[0], m[1], err)
		}
	}
	if _, err := Transition(EntryRejected, EntryExecuting); !errors.Is(err, ErrIllegalTransition) {
		t.Errorf("rejected -> executing allowed: %v", err)
	}
}
