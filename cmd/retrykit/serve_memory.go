package main

import (
	"runtime/debug"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/ojshttp"
)

// What `serve` promises about its resident memory (docs/servers.md,
// "Memory"): below serveMemoryBound of its flags, whatever the load.
const (
	// serveBaseMemory is the bound's constant term: the runtime, the
	// binary, and the in-flight budget (bodies being read and answers
	// being rendered, ojshttp.DefaultMaxInflightBytes, up to three times
	// their size while encoded).
	serveBaseMemory = 200 << 20
	// servePerJobMemory is the bound's term per job of --max-jobs: what
	// a held job costs beyond the bytes it counts against --max-bytes
	// (measured at most 1 KiB of resident memory on the worst shapes,
	// docs/benchmarks.md "Memory per held job").
	servePerJobMemory = 1 << 10
	// serveLimitMargin is how far below the bound serve sets the Go
	// runtime's soft memory limit: the resident memory the runtime does
	// not count (the binary's text and data).
	serveLimitMargin = 32 << 20
)

// serveMemoryBound returns the resident memory `serve --max-bytes B
// --max-jobs J` stays below: 2 × B + 1 KiB × J + 200 MiB, saturating.
// The factor 2 is the collector's headroom over the live job data
// (GOGC=100); the per-job term covers each job's records beyond what it
// counts against B (B counts 512 bytes per job beside its data).
func serveMemoryBound(maxBytes int64, maxJobs int) int64 {
	return sat.AddInt(sat.AddInt(sat.MulInt(maxBytes, 2), sat.MulInt(int64(maxJobs), servePerJobMemory)), serveBaseMemory)
}

// serveMemoryLimit is the soft memory limit serve gives the Go runtime
// (unless GOMEMLIMIT is set): serveLimitMargin below the bound, so that
// the collector works harder near the bound instead of doubling the heap
// past it.
func serveMemoryLimit(maxBytes int64, maxJobs int) int64 {
	return serveMemoryBound(maxBytes, maxJobs) - serveLimitMargin
}

// reclaimEvery is how often serve gives memory back after a burst
// (ojshttp.Server.Reclaim, then debug.FreeOSMemory after a large drop).
const reclaimEvery = 5 * time.Second

// Thresholds of a large drop: what is held must fall by this much, and to
// at most half of its peak, for serve to return the freed memory to the
// operating system at once rather than through the runtime's background
// scavenger (which waits for the next collection, up to 2 minutes on an
// idle server).
const (
	dropJobs  = 1024
	dropBytes = 8 << 20
)

// dropWatch decides when the jobs or bytes held have fallen enough to
// return the freed memory to the operating system. The zero value is
// ready; not safe for concurrent use.
type dropWatch struct {
	jobs  int   // peak since the last large drop in jobs
	bytes int64 // peak since the last large drop in bytes
	// lastJobs and lastBytes are the previous call's, still how many
	// calls in a row saw them unchanged; freedJobs and freedBytes what
	// was held when free last returned true.
	lastJobs, freedJobs   int
	lastBytes, freedBytes int64
	still                 int
}

// free records what is held now and reports whether to return the freed
// memory to the operating system: on a large drop (jobs at most half
// their peak and at least dropJobs below it, or bytes at most half their
// peak and at least dropBytes below it; each peak is the largest value
// since its own last large drop, which resets it), or once what is held
// has stayed the same for two calls after falling below what it was at
// the last return of true (the tail of a burst too small to be a large
// drop, returned once the server is quiet).
func (w *dropWatch) free(jobs int, bytes int64) bool {
	w.jobs, w.bytes = max(w.jobs, jobs), max(w.bytes, bytes)
	jobsDrop := w.jobs-jobs >= dropJobs && jobs <= w.jobs/2
	bytesDrop := w.bytes-bytes >= dropBytes && bytes <= w.bytes/2
	if jobsDrop {
		w.jobs = jobs
	}
	if bytesDrop {
		w.bytes = bytes
	}
	if jobs == w.lastJobs && bytes == w.lastBytes {
		w.still++
	} else {
		w.still = 0
	}
	w.lastJobs, w.lastBytes = jobs, bytes
	settled := w.still == 2 && (jobs < w.freedJobs || bytes < w.freedBytes)
	if jobsDrop || bytesDrop || settled {
		w.freedJobs, w.freedBytes = jobs, bytes
		return true
	}
	return false
}

// reclaimLoop calls srv.Reclaim every reclaimEvery until stop is closed,
// and returns the freed memory to the operating system when dropWatch
// says so.
func reclaimLoop(srv *ojshttp.Server, stop <-chan struct{}) {
	t := time.NewTicker(reclaimEvery)
	defer t.Stop()
	var w dropWatch
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if w.free(srv.Reclaim()) {
				debug.FreeOSMemory()
			}
		}
	}
}
