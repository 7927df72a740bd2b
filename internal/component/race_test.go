//go:build race

package component

const raceEnabled = true
