package chart

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
)

// palette is a colour-blind-friendly set (Okabe-Ito), cycled per series.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// Color returns the colour of the i-th series.
func Color(i int) string { return palette[((i%len(palette))+len(palette))%len(palette)] }

// Middle is the one name of a delay chart's line, in the legend, the
// tooltips and the retrykit command's text: the delay with the middle
// jitter draw r = 0.5 (an OJS policy's base delay, a uniform jitter's
// median).
const Middle = "middle (r = 0.5)"

// Point is one attempt of a delay series: the band [Lo, Hi] (equal when
// the delay is exact) and the line value Mid, the [Middle].
type Point struct {
	Attempt     int
	Lo, Mid, Hi time.Duration
}

// Series is one policy or profile on a delay chart.
type Series struct {
	Name   string
	Points []Point
}

// Delays is a chart of delay per attempt, log scale, one band and one line
// per series. The zero value draws an empty frame.
type Delays struct {
	Title  string
	Note   string // a second line under the title; optional
	Series []Series
}

// layout of a chart, in SVG user units. The legend column is at least
// right wide and grows with the longest series name, so that no name is
// cut at the right edge; the plot keeps its width.
const (
	width   = 900.0 // with the narrowest legend column
	left    = 80.0
	right   = 220.0 // legend column, at least
	top     = 70.0
	plotH   = 380.0
	bottomM = 60.0
	// legendChar is a generous width of one legend character at 13px
	// (DejaVu Sans averages about 7.5; capitals and "m", "w" reach 11).
	legendChar = 8.5
	// maxLegendRunes bounds a legend name; a longer one is cut with "…"
	// and shown whole in its tooltip.
	maxLegendRunes = 72
)

// legendWidth returns the width of the legend column for names: the
// swatch (48 units from the plot) and the longest name, plus a margin.
func legendWidth(names []string) float64 {
	w := right
	for _, n := range names {
		s, _ := legendName(n)
		w = max(w, 48+float64(utf8.RuneCountInString(s))*legendChar+12)
	}
	return math.Ceil(w)
}

// legendName returns n as the legend shows it, cut to maxLegendRunes,
// and whether it was cut.
func legendName(n string) (string, bool) {
	if utf8.RuneCountInString(n) <= maxLegendRunes {
		return n, false
	}
	r := []rune(n)
	return string(r[:maxLegendRunes-1]) + "…", true
}

// WriteSVG writes the chart.
func (c Delays) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	plotW := width - left - right
	height := top + plotH + bottomM
	names := make([]string, len(c.Series))
	for i, s := range c.Series {
		names[i] = s.Name
	}
	totalW := left + plotW + legendWidth(names)
	// Ranges: attempts 1..maxN; delays over every positive value.
	maxN, lo, hi := 1, time.Duration(math.MaxInt64), time.Duration(0)
	zero := false
	for _, s := range c.Series {
		for _, p := range s.Points {
			maxN = max(maxN, p.Attempt)
			for _, v := range []time.Duration{p.Lo, p.Mid, p.Hi} {
				if v <= 0 {
					zero = true
					continue
				}
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = time.Second, 10*time.Second
	}
	// Keep the scale readable: at most three decades below the largest
	// delay or 1ms, whichever is lower; smaller delays sit on the floor.
	if floor := max(min(time.Millisecond, hi/1000), 1); lo < floor {
		lo, zero = floor, true
	}
	ya, yb := logRange(lo, hi)
	la, lb := math.Log10(float64(ya)), math.Log10(float64(yb))
	y := func(d time.Duration) float64 {
		if d < ya {
			d = ya // zero and tiny delays sit on the axis floor
		}
		return top + plotH - (math.Log10(float64(d))-la)/(lb-la)*plotH
	}
	// Attempts sit at the middle of equal slots, so the first and the last
	// are not drawn on the frame.
	minN := 1
	x := func(n int) float64 {
		return left + (float64(n-minN)+0.5)/float64(maxN-minN+1)*plotW
	}

	header(bw, totalW, height, c.Title, c.Note)
	// Grid and tick labels.
	for _, t := range ticksIn(ya, yb) {
		yy := y(t)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", left, yy, left+plotW, yy)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle" class="ytick">%s</text>`+"\n", left-6, yy, FormatDuration(t))
	}
	step := max(int(niceStep(float64(maxN-minN), 12)), 1)
	for n := minN; n <= maxN; n++ {
		if n%step != 0 && (n != minN || step == 2) {
			continue
		}
		xx := x(n)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/>`+"\n", xx, top, xx, top+plotH)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle" class="xtick">%d</text>`+"\n", xx, top+plotH+18, n)
	}
	frame(bw, left, top, plotW, plotH)
	fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle" class="axis">attempt that failed</text>`+"\n", left+plotW/2, top+plotH+44)
	fmt.Fprintf(bw, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle" class="axis">delay before the next attempt (log scale)</text>`+"\n", 22.0, top+plotH/2)

	for i, s := range c.Series {
		col := Color(i)
		fmt.Fprintf(bw, `<g data-series="%s">`+"\n", esc(s.Name))
		if len(s.Points) > 0 {
			var band strings.Builder
			for j, p := range s.Points {
				fmt.Fprintf(&band, "%s%.1f,%.1f", sep(j), x(p.Attempt), y(p.Hi))
			}
			for j := len(s.Points) - 1; j >= 0; j-- {
				p := s.Points[j]
				fmt.Fprintf(&band, " %.1f,%.1f", x(p.Attempt), y(p.Lo))
			}
			fmt.Fprintf(bw, `<polygon points="%s" fill="%s" fill-opacity="0.18" stroke="%s" stroke-opacity="0.35" stroke-width="0.8"/>`+"\n", band.String(), col, col)
			var line strings.Builder
			for j, p := range s.Points {
				fmt.Fprintf(&line, "%s%.1f,%.1f", sep(j), x(p.Attempt), y(p.Mid))
			}
			fmt.Fprintf(bw, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", line.String(), col)
			for _, p := range s.Points {
				fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s, attempt %d: %s %s, range [%s, %s]</title></circle>`+"\n",
					x(p.Attempt), y(p.Mid), col, esc(s.Name), p.Attempt, Middle, human.Round(p.Mid), human.Floor(p.Lo), human.Ceil(p.Hi))
			}
		}
		fmt.Fprintln(bw, "</g>")
	}
	legend(bw, left+plotW+20, top, names, true)
	if zero {
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" class="note">Delays below %s (and 0) are drawn on the bottom axis.</text>`+"\n", left, top+plotH+58, FormatDuration(ya))
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

func sep(j int) string {
	if j == 0 {
		return ""
	}
	return " "
}

// header opens the document: white background, styles, title.
func header(w io.Writer, width, height float64, title, note string) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintln(w, `<style>.title{font-size:17px;font-weight:bold}.note{font-size:12px;fill:#555555}.axis{font-size:13px;fill:#333333}.xtick,.ytick{font-size:12px;fill:#333333}.legend{font-size:13px}</style>`)
	fmt.Fprintf(w, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(w, `<text x="%.1f" y="28" class="title">%s</text>`+"\n", left, esc(title))
	if note != "" {
		fmt.Fprintf(w, `<text x="%.1f" y="48" class="note">%s</text>`+"\n", left, esc(note))
	}
}

func frame(w io.Writer, x, y, wd, h float64) {
	fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444444"/>`+"\n", x, y, wd, h)
}

// legend writes one swatch and name per series; band adds the key to the
// line and the band.
func legend(w io.Writer, x, y float64, names []string, band bool) {
	fmt.Fprintf(w, `<g class="legend">`+"\n")
	for i, n := range names {
		yy := y + 10 + float64(i)*22
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="22" height="12" fill="%s" fill-opacity="%s"/>`, x, yy-6, Color(i), map[bool]string{true: "0.25", false: "1"}[band])
		if band {
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`, x, yy, x+22, yy, Color(i))
		}
		s, cut := legendName(n)
		tip := ""
		if cut {
			tip = "<title>" + esc(n) + "</title>"
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" dominant-baseline="middle" class="legend">%s%s</text>`+"\n", x+28, yy, tip, esc(s))
	}
	if band {
		yy := y + 10 + float64(len(names))*22 + 10
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" class="note">line: %s</text>`+"\n", x, yy, Middle)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" class="note">band: jitter range</text>`+"\n", x, yy+16)
	}
	fmt.Fprintln(w, "</g>")
}

func esc(s string) string { return html.EscapeString(s) }

// Panel is one row of a bar chart: a count per time bucket.
type Panel struct {
	Name   string
	Counts []int
}

// Bars is a stack of bar charts sharing one time axis and one count scale:
// Counts[i] is drawn over [i*Bucket, (i+1)*Bucket). Shade, if non-zero,
// shades [0, Shade) in every panel and labels it ShadeLabel. The zero value
// draws nothing but the title.
type Bars struct {
	Title      string
	Note       string
	Bucket     time.Duration
	Shade      time.Duration
	ShadeLabel string
	XLabel     string // e.g. "time since the outage began"
	YLabel     string // e.g. "retries per 1s"
	Panels     []Panel
}

// WriteSVG writes the chart.
func (c Bars) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	const panelH, gap = 190.0, 60.0
	plotW := width - left - right
	height := top + float64(len(c.Panels))*(panelH+gap) + 10
	names := make([]string, len(c.Panels))
	for i, p := range c.Panels {
		names[i] = p.Name
	}
	totalW := left + plotW + legendWidth(names)
	nb, peak := 1, 1
	for _, p := range c.Panels {
		nb = max(nb, len(p.Counts))
		for _, v := range p.Counts {
			peak = max(peak, v)
		}
	}
	bucket := max(c.Bucket, 1)
	span := time.Duration(nb) * bucket
	cstep := niceStep(float64(peak), 5)
	ctop := math.Ceil(float64(peak)/cstep) * cstep
	header(bw, totalW, height, c.Title, c.Note)
	tstep := durationStep(span, 10)
	for i, p := range c.Panels {
		y0 := top + float64(i)*(panelH+gap)
		base := y0 + panelH
		x := func(d time.Duration) float64 { return left + float64(d)/float64(span)*plotW }
		fmt.Fprintf(bw, `<g data-series="%s">`+"\n", esc(p.Name))
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" class="legend">%s</text>`+"\n", left, y0-8, esc(p.Name))
		if c.Shade > 0 {
			fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#eeeeee"/>`+"\n", left, y0, x(min(c.Shade, span))-left, panelH)
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end" class="note">%s</text>`+"\n", x(min(c.Shade, span))-4, y0+14, esc(c.ShadeLabel))
		}
		for v := 0.0; v <= ctop; v += cstep {
			yy := base - v/ctop*panelH
			fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", left, yy, left+plotW, yy)
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle" class="ytick">%s</text>`+"\n", left-6, yy, formatCount(v))
		}
		for t := time.Duration(0); t <= span; t += tstep {
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle" class="xtick">%s</text>`+"\n", x(t), base+18, formatOnAxis(t, tstep))
		}
		bwid := plotW / float64(nb)
		for b, v := range p.Counts {
			if v == 0 {
				continue
			}
			h := float64(v) / ctop * panelH
			fmt.Fprintf(bw, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s: %d</title></rect>`+"\n",
				left+float64(b)*bwid, base-h, max(bwid, 0.5), h, Color(i), time.Duration(b)*bucket, v)
		}
		frame(bw, left, y0, plotW, panelH)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle" class="axis">%s</text>`+"\n", left+plotW/2, base+40, esc(c.XLabel))
		fmt.Fprintf(bw, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle" class="axis">%s</text>`+"\n", 22.0, y0+panelH/2, esc(c.YLabel))
		fmt.Fprintln(bw, "</g>")
	}
	legend(bw, left+plotW+20, top, names, false)
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}
