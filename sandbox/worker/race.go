//go:build race

package worker

// RaceMemoryFactor scales a worker's hard data limit: the race detector's
// shadow memory grows with the heap (about 3x here) and is not the
// program's memory.
const RaceMemoryFactor = 4
