package cover_test

import (
	"fmt"

	"github.com/retrykit/retrykit/internal/cover"
)

func ExampleGreedy() {
	cands := []cover.Candidate{
		{Name: "no-post-jitter-cap", Reproduces: []int{0, 1, 2}, Contradicts: []int{7}},
		{Name: "time-factor(×2)", Rank: 1, Reproduces: []int{0, 1}},
	}
	picks, left := cover.Greedy(cands, []int{0, 1, 2})
	for _, p := range picks {
		fmt.Println(cands[p.Index].Name, p.Claims)
	}
	fmt.Println("unexplained:", left)
	// Output:
	// time-factor(×2) [0 1]
	// unexplained: [2]
}
