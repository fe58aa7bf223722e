//go:build !race

package sandbox

// raceMemoryFactor scales a worker's hard data limit (see race.go).
const raceMemoryFactor = 1
