//go:build cgo

package main

// cgoBuild reports whether this binary was built with cgo, whose C library
// reserves address space per thread (checkAddressSpace).
const cgoBuild = true

// threadMargin is the address space checkAddressSpace keeps for the
// threads serve may start: with cgo each is a pthread with its own
// 8 MiB stack mapping and possibly a 64 MiB malloc arena.
const threadMargin = 256 << 20
