package worker

import (
	"context"
	"runtime/metrics"
	"sync"
	"time"
)

// Memory budget of a worker process, as fractions of its MemoryLimit.
const (
	// heapWatchPercent: the watchdog interrupts the program once the heap
	// passes this share of the limit.
	heapWatchPercent = 80
	// softLimitPercent: Go's soft memory limit (debug.SetMemoryLimit), so
	// that garbage is collected hard before the watchdog looks at the heap.
	softLimitPercent = 70
	// heapWatchEvery is the watchdog's polling period. With GOMAXPROCS=1 a
	// busy VM goroutine is preempted every 10ms, which bounds the real
	// period; the hard rlimit catches what grows faster.
	heapWatchEvery = 2 * time.Millisecond
)

// heapMetric is the bytes occupied by heap objects, live or not yet swept.
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapBytes returns the bytes of heap objects now.
func heapBytes() int64 {
	sample := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64())
}

// watch reads a size (the heap's, a worker's resident memory) every
// period on a goroutine of its own until stop is called or read fails;
// once the size passes ceiling it calls over and stops reading. stop
// waits for the goroutine and reports whether over was called.
func watch(every time.Duration, ceiling int64, read func() (int64, error), over func()) (stop func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	var done sync.WaitGroup
	var tripped bool // written by the goroutine, read after done
	done.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			n, err := read()
			if err != nil {
				return
			}
			if n > ceiling {
				over()
				tripped = true
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() bool {
		cancel()
		done.Wait()
		return tripped
	}
}
