package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// checkAddressSpace refuses to start serve when an address-space limit
// (RLIMIT_AS: ulimit -v, some container runtimes) cannot hold what the
// server may use: the address space the process has already reserved
// (VmSize; the Go runtime reserves about 1.2 GiB at start, and a cgo
// build's C library about 0.5 GiB more), plus heap (what the heap may
// reach for its --max-bytes: addressSpaceHeap, or a lower
// GOMEMLIMIT), plus a margin for thread stacks (threadMargin). A
// server started anyway would die with an out-of-memory crash once its
// heap grew, losing every job (RK-267). It returns nil without a limit.
func checkAddressSpace(maxBytes, heap int64) error {
	var lim syscall.Rlimit
	// RLIM_INFINITY is all ones; any value that large is no limit either.
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur > 1<<62 {
		return nil
	}
	reserved, err := vmSize()
	if err != nil {
		return nil // no /proc: nothing to measure against
	}
	need := reserved + heap + threadMargin
	limit := int64(lim.Cur)
	if need <= limit {
		return nil
	}
	msg := fmt.Sprintf("the address-space limit (RLIMIT_AS, ulimit -v) of %d MiB cannot hold --max-bytes %d: "+
		"serve needs about %d MiB (%d MiB reserved at start, a heap of up to %d MiB, %d MiB for threads)",
		limit>>20, maxBytes, need>>20, reserved>>20, heap>>20, threadMargin>>20)
	if cgoBuild {
		msg += "; a binary built with CGO_ENABLED=0 reserves about 0.5 GiB less"
	}
	if heap == addressSpaceHeap(maxBytes) {
		// What the heap may hold beyond the job data, at any --max-bytes,
		// less startSpread: what is reserved at start differs from run
		// to run (by up to 72 MiB here), and the value named must still start.
		if fit := (limit - reserved - threadMargin - startSpread - (heap - 2*maxBytes)) / 2; fit >= 1<<20 {
			msg += fmt.Sprintf("; --max-bytes %d fits", fit)
		} else {
			msg += "; no --max-bytes fits under this limit"
		}
	}
	return fmt.Errorf("%s; raise the limit to at least %d MiB", msg, (need+startSpread)>>20+1)
}

// startSpread is the address space a named --max-bytes leaves spare for
// a later start that reserves more than this one did (1533 to 1605 MiB
// in runs of one binary on one machine); the limit advised keeps it too.
const startSpread = 128 << 20

// vmSize returns the process's address space in use (VmSize), in bytes.
func vmSize() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
