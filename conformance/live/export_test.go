package live

// ShrinkVariants returns the cases shrinking tries after c, each in c's
// kind (so ReplayCase judges it there), for the external tests.
func ShrinkVariants(c FuzzCase) []FuzzCase {
	vs := variants(c)
	for i := range vs {
		vs[i].Kind = c.Kind
	}
	return vs
}
