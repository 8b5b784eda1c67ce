// Package shrink gives back the memory a Go map keeps after a burst. A map
// never shrinks: once it has held a million entries its buckets stay, even
// when it is emptied. [Map] rebuilds a map when it holds under an eighth of
// its peak size; the executor's job, queue, type and active maps and the
// HTTP server's job store call it after deleting.
package shrink

// Min is the smallest peak size at which [Map] rebuilds a map: below it the
// memory kept is too small to be worth a copy.
const Min = 1024

// Map returns m, or a copy of it when it holds under an eighth of *peak (and
// *peak is at least [Min]); after a copy *peak is the copy's size. The caller
// keeps *peak at the largest size m has had since the last rebuild. The copy
// costs O(len(m)), paid for by the 7/8 of the peak's deletions since then.
// Map is not safe for concurrent use with writers of m.
func Map[K comparable, V any](m map[K]V, peak *int) map[K]V {
	if *peak < Min || len(m) >= *peak/8 {
		return m
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	*peak = len(c)
	return c
}
