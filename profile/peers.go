package profile

// peerModels returns the profiles of the systems researched from their
// vector files and pages in testdata/profiles and docs/profiles (job
// queues of other languages).
func peerModels() []*model {
	return nil
}
