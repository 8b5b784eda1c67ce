package scenario

import "sort"

// SetExpectations sets the expectation of every step of sc to what was
// observed after it (obs, one per step): the error class, the fetched job on
// fetch steps, every job the steps name (absent when not observed) with its
// state, attempt, times, dead-letter flag and error history. The type of an
// error entry for an expired reservation is left open: it is the
// implementation's own (testdata/scenarios/README.md).
func SetExpectations(sc *Scenario, obs []Observation) {
	ids := stepIDs(sc)
	for i, o := range obs {
		x := Expect{Error: o.Error, Jobs: map[string]JobExpect{}}
		if len(o.Counts) > 0 {
			x.Counts = o.Counts
		}
		if sc.Steps[i].Op == "fetch" {
			x.Fetched.Set = true
			if o.Fetched == nil {
				x.Fetched.Null = true
			} else {
				x.Fetched.S = *o.Fetched
			}
		}
		for _, id := range ids {
			if _, ok := o.Jobs[id]; !ok {
				x.Absent = append(x.Absent, id)
			}
		}
		for id, j := range o.Jobs {
			attempt, dl := j.Attempt, j.DeadLetter
			errs := make([]ErrorExpect, len(j.Errors))
			for k, e := range j.Errors {
				errs[k] = ErrorExpect{Attempt: e.Attempt, Code: e.Code, AtMs: e.AtMs, Details: e.Details, Timeout: e.Timeout}
				if !e.Timeout {
					errs[k].Type = e.Type
				}
			}
			x.Jobs[id] = JobExpect{State: j.State, Attempt: &attempt, DeadLetter: &dl, Errors: &errs,
				NextRetryAtMs: msExpect(j.NextRetryAtMs), ReservedUntilMs: msExpect(j.ReservedUntilMs)}
		}
		if len(x.Jobs) == 0 {
			x.Jobs = nil
		}
		sc.Steps[i].Expect = x
	}
}

// stepIDs returns the job ids sc's steps name, sorted.
func stepIDs(sc *Scenario) []string {
	seen := map[string]bool{}
	for _, st := range sc.Steps {
		if st.Job != nil {
			seen[st.Job.ID] = true
		}
		if st.ID != "" {
			seen[st.ID] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// msExpect is an expectation of the nullable instant p.
func msExpect(p *int64) OptMs {
	if p == nil {
		return OptMs{Set: true, Null: true}
	}
	return OptMs{Set: true, Ms: *p}
}
