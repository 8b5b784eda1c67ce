package mdtext_test

import (
	"fmt"

	"github.com/retrykit/retrykit/internal/mdtext"
)

func ExampleEscape() {
	fmt.Println(mdtext.Escape(`![pixel](https://example.com/t.png) <b>srv</b> | auth*`))
	// Output: !\[pixel\](https://example.com/t.png) &lt;b&gt;srv&lt;/b&gt; \| auth\*
}
