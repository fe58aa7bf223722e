package worker

import (
	"context"
	"runtime/metrics"
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
// period until ctx ends or read fails; once the size passes ceiling it
// calls over and reports true.
func watch(ctx context.Context, every time.Duration, ceiling int64, read func() (int64, error), over func()) bool {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := read()
		if err != nil {
			return false
		}
		if n > ceiling {
			over()
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
