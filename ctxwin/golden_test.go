package ctxwin

import "flag"

// update rewrites the golden files of the tests that have them
// (go test ./ctxwin -update).
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// thrashing reports that the thrash guard stopped the shrinks.
func thrashing(m *Manager) bool {
	stalled, _ := m.Gauge().Stalled()
	return stalled
}
