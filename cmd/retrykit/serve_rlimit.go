package main

import "github.com/retrykit/retrykit/internal/sat"

// addressSpaceHeap is the heap checkAddressSpace counts for --max-bytes
// n: 2n + 128 MiB, the job data with the collector's headroom plus the
// in-flight budget of bodies and answers (64 MiB, counted at up to three
// times their size while encoded). It leaves out serveMemoryBound's
// per-job term: a server filled to --max-jobs with small jobs needs that
// on top (docs/servers.md).
func addressSpaceHeap(n int64) int64 { return sat.AddInt(sat.MulInt(n, 2), 128<<20) }
