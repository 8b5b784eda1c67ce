package main

import "github.com/retrykit/retrykit/internal/sat"

// heapLimit is the soft Go memory limit serve sets for --max-bytes n
// (unless GOMEMLIMIT is set): 2n + 128 MiB. It leaves 72 MiB of the
// documented resident bound, 2n + 200 MiB, to what the Go runtime does not
// count (the binary's text, C allocations, freed pages not yet returned).
// The job data (n) and the in-flight budget of bodies and answers (64 MiB,
// counted at up to three times their size while encoded) fit below it
// with the collector's headroom; the mixed dead-letter load
// (TestServeMixedDeadLetterLoadWithinBound) measures it.
func heapLimit(n int64) int64 { return sat.AddInt(sat.MulInt(n, 2), 128<<20) }
