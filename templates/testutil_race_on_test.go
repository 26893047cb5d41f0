//go:build race

package templates

// raceEnabled: the race detector makes sync.Pool drop items on purpose,
// so allocation counts mean nothing.
const raceEnabled = true
