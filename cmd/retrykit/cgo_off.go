//go:build !cgo

package main

// cgoBuild reports whether this binary was built with cgo (see cgo_on.go).
const cgoBuild = false

// threadMargin is the address space checkAddressSpace keeps for the
// threads serve may start; without cgo the Go runtime maps their stacks
// itself, from its own reservations.
const threadMargin = 64 << 20
