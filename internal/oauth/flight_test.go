package oauth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// Callers that need a run while one is under way join it: one run, every
// caller gets its outcome, and a caller that gives up does not fail the
// others. synctest.Wait returns once every caller is blocked in Do, so
// they have all joined before the run is let finish.
func TestFlightShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		f := NewFlight[string](errors.New("closed"))
		defer f.Close()
		var runs atomic.Int32
		release := make(chan struct{})
		run := func(ctx context.Context) (string, error) {
			runs.Add(1)
			<-release
			return "tok", nil
		}
		ctx, cancel := context.WithCancel(t.Context())
		quit := make(chan error, 1)
		go func() {
			_, err := f.Do(ctx, run)
			quit <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-quit; !errors.Is(err, context.Canceled) {
			t.Errorf("the caller that gave up got %v", err)
		}
		var wg sync.WaitGroup
		got := make(chan string, n)
		for range n {
			wg.Go(func() {
				v, err := f.Do(t.Context(), run)
				if err != nil {
					t.Error(err)
				}
				got <- v
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		close(got)
		for v := range got {
			if v != "tok" {
				t.Errorf("got %q", v)
			}
		}
		if r := runs.Load(); r != 1 {
			t.Errorf("%d runs, want 1", r)
		}
	})
}

// Close cancels the run under way and waits for it; Do then fails with
// the Flight's error.
func TestFlightClose(t *testing.T) {
	closed := errors.New("the thing is closed")
	f := NewFlight[int](closed)
	started := make(chan struct{})
	quit := make(chan error, 1)
	go func() {
		_, err := f.Do(t.Context(), func(ctx context.Context) (int, error) {
			close(started)
			<-ctx.Done()
			return 0, ctx.Err()
		})
		quit <- err
	}()
	<-started
	f.Close()
	if err := <-quit; !errors.Is(err, context.Canceled) {
		t.Errorf("the run under way ended with %v", err)
	}
	if _, err := f.Do(t.Context(), func(context.Context) (int, error) { return 1, nil }); err != closed {
		t.Errorf("Do after Close = %v", err)
	}
}
