package chart_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
)

// Tick labels use the largest unit that divides the duration exactly:
// 1.5s is 1500ms, not a fraction of a second.
func ExampleFormatDuration() {
	for _, d := range []time.Duration{time.Second, 10 * time.Minute, 24 * time.Hour, 1500 * time.Millisecond} {
		fmt.Println(chart.FormatDuration(d))
	}
	// Output:
	// 1s
	// 10m
	// 1d
	// 1500ms
}

// A delay chart is plain SVG; each series is a <g> element named by its
// data-series attribute.
func ExampleDelays_WriteSVG() {
	c := chart.Delays{
		Title: "OJS default policy",
		Series: []chart.Series{{
			Name: "ojs",
			Points: []chart.Point{
				{Attempt: 1, Lo: 500 * time.Millisecond, Mid: time.Second, Hi: 1500 * time.Millisecond},
				{Attempt: 2, Lo: time.Second, Mid: 2 * time.Second, Hi: 3 * time.Second},
			},
		}},
	}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		fmt.Println(err)
		return
	}
	svg := buf.String()
	fmt.Println(strings.HasPrefix(svg, "<svg"), strings.HasSuffix(strings.TrimSpace(svg), "</svg>"))
	fmt.Println(strings.Count(svg, `data-series="ojs"`))
	// Output:
	// true true
	// 1
}
