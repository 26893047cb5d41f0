//go:build !race

package templates

const raceEnabled = false
