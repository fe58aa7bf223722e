//go:build !race

package worker

// RaceMemoryFactor scales a worker's hard data limit (see race.go).
const RaceMemoryFactor = 1
