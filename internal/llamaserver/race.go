//go:build race

package llamaserver

// underRace is set when the tests run under the race detector.
const underRace = true
