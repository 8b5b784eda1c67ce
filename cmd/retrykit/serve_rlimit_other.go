//go:build !linux

package main

// checkAddressSpace is serve's address-space check (see the Linux
// version); elsewhere there is no RLIMIT_AS to read the same way.
func checkAddressSpace(maxBytes, heap int64) error { return nil }
