// Package chart renders the small SVG charts of the retrykit command: delays
// per attempt on a log scale with jitter bands (schedule, compare, fit), and
// counts per time bucket as bars (simulate).
//
// The output is self-contained SVG 1.1: a white background, a title, both
// axes with round tick labels (durations such as 1s, 10s, 1m, 1h; counts
// such as 0, 500, 1000), light grid lines and a legend, one colour per
// series. Each series is wrapped in a <g> element whose data-series
// attribute carries its name, so tests can find it. Rendering is
// deterministic: the same input gives the same bytes.
//
// Non-goals: interactivity, fonts other than the viewer's sans-serif,
// layouts beyond these two chart kinds.
package chart
