package bounded_test

import (
	"fmt"
	"testing/fstest"

	"github.com/retrykit/retrykit/internal/bounded"
)

func Example() {
	fsys := fstest.MapFS{"v.json": {Data: []byte(`{"vectors": []}`)}}
	b, err := bounded.ReadFile(fsys, "v.json", bounded.MaxSuiteFile)
	fmt.Println(string(b), err)
	_, err = bounded.ReadFile(fsys, "v.json", 8)
	fmt.Println(err)
	// Output:
	// {"vectors": []} <nil>
	// file too large: more than the limit of 8 bytes
}
