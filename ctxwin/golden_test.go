package ctxwin

import "flag"

// update rewrites the golden files of the tests that have them
// (go test ./ctxwin -update).
var update = flag.Bool("update", false, "rewrite the golden files under testdata")
