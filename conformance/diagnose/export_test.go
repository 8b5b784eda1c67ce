package diagnose

// Baseline is the engine without a bug, for tests.
var Baseline = Model{Name: "baseline"}
