package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// svgDoc is what the tests read back from a chart.
type svgDoc struct {
	Series []string // data-series attributes, in order
	Texts  []string // every text element's content
	Rects  int
	Bg     bool // a white full-size rectangle comes first
}

func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var d svgDoc
	dec := xml.NewDecoder(bytes.NewReader(b))
	inText, first := false, true
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "g":
				for _, a := range e.Attr {
					if a.Name.Local == "data-series" {
						d.Series = append(d.Series, a.Value)
					}
				}
			case "text":
				inText = true
				text.Reset()
			case "rect":
				d.Rects++
				if first {
					attrs := map[string]string{}
					for _, a := range e.Attr {
						attrs[a.Name.Local] = a.Value
					}
					d.Bg = attrs["fill"] == "#ffffff" && attrs["x"] == "0" && attrs["y"] == "0"
					first = false
				}
			}
		case xml.CharData:
			if inText {
				text.Write(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				inText = false
				d.Texts = append(d.Texts, text.String())
			}
		}
	}
	return d
}

func TestDelaysSVG(t *testing.T) {
	c := Delays{Title: "Retry delays: a & b", Series: []Series{
		{Name: "sidekiq", Points: []Point{{1, 15 * time.Second, 20 * time.Second, 24 * time.Second}, {2, 16 * time.Second, 26 * time.Second, 36 * time.Second}, {3, 31 * time.Second, 45 * time.Second, 60 * time.Second}}},
		{Name: "full <jitter>", Points: []Point{{1, 0, 500 * time.Millisecond, time.Second}, {2, 0, time.Second, 2 * time.Second}, {3, 0, 2 * time.Second, 4 * time.Second}}},
	}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, buf.Bytes())
	if !slices.Equal(d.Series, []string{"sidekiq", "full <jitter>"}) {
		t.Errorf("series %q", d.Series)
	}
	if !d.Bg {
		t.Error("no white background first")
	}
	for _, want := range []string{"Retry delays: a & b", "attempt that failed", "delay before the next attempt (log scale)",
		"100ms", "1s", "10s", "1m", "1", "2", "3", "sidekiq", "full <jitter>", "band: jitter range",
		"Delays below 100ms (and 0) are drawn on the bottom axis."} {
		if !slices.Contains(d.Texts, want) {
			t.Errorf("no text %q among %q", want, d.Texts)
		}
	}
	// Deterministic.
	var again bytes.Buffer
	_ = c.WriteSVG(&again)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two renderings differ")
	}
}

func TestBarsSVG(t *testing.T) {
	c := Bars{Title: "herd", Bucket: time.Second, Shade: 60 * time.Second, ShadeLabel: "outage",
		XLabel: "time since the outage began", YLabel: "retries per 1s",
		Panels: []Panel{{Name: "jitter off", Counts: []int{0, 2000, 0, 2000}}, {Name: "jitter on", Counts: []int{0, 700, 650, 600, 50}}}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, buf.Bytes())
	if !slices.Equal(d.Series, []string{"jitter off", "jitter on"}) || !d.Bg {
		t.Errorf("series %q, background %t", d.Series, d.Bg)
	}
	for _, want := range []string{"herd", "time since the outage began", "retries per 1s", "0", "500", "1000", "2000", "0", "1s", "2s", "outage"} {
		if !slices.Contains(d.Texts, want) {
			t.Errorf("no text %q among %q", want, d.Texts)
		}
	}
	if d.Rects < 1+2+2+4 { // background, shades, frames, bars
		t.Errorf("%d rects", d.Rects)
	}
}

// The ticks of one linear axis share one unit.
func TestFormatOnAxis(t *testing.T) {
	var got []string
	for d := time.Duration(0); d <= 2*time.Minute; d += 15 * time.Second {
		got = append(got, formatOnAxis(d, 15*time.Second))
	}
	if want := "0 15s 30s 45s 60s 75s 90s 105s 120s"; strings.Join(got, " ") != want {
		t.Errorf("ticks %q, want %q", strings.Join(got, " "), want)
	}
	if got := formatOnAxis(1500*time.Millisecond, 500*time.Millisecond); got != "1.5s" {
		t.Errorf("formatOnAxis(1.5s, 500ms) = %q", got)
	}
	if got := formatOnAxis(2*time.Hour, time.Hour); got != "2h" {
		t.Errorf("formatOnAxis(2h, 1h) = %q", got)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0", time.Second: "1s", 10 * time.Minute: "10m", 24 * time.Hour: "1d",
		100 * time.Millisecond: "100ms", 90 * time.Second: "90s", 1500 * time.Millisecond: "1500ms", 3 * time.Nanosecond: "3ns"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	if got := formatCount(15000); got != "15k" {
		t.Errorf("formatCount(15000) = %q", got)
	}
}

func TestLogRange(t *testing.T) {
	a, b := logRange(15*time.Second, 3*time.Hour)
	if a != 10*time.Second || b != 24*time.Hour {
		t.Errorf("logRange(15s, 3h) = %v, %v", a, b)
	}
	a, b = logRange(time.Second, time.Second)
	if a != time.Second || b != 10*time.Second {
		t.Errorf("logRange(1s, 1s) = %v, %v", a, b)
	}
}

// legendTexts returns the svg's width and, for every legend text, its x
// and content.
func legendTexts(t *testing.T, b []byte) (width float64, xs []float64, texts []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	in, inTitle := -1, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range e.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch {
			case e.Name.Local == "svg":
				fmt.Sscan(attrs["width"], &width)
			case e.Name.Local == "text" && attrs["class"] == "legend" && attrs["dominant-baseline"] == "middle":
				var x float64
				fmt.Sscan(attrs["x"], &x)
				xs, texts, in = append(xs, x), append(texts, ""), len(texts)
			case e.Name.Local == "title":
				inTitle = true // a tooltip, not the shown text
			}
		case xml.CharData:
			if in >= 0 && !inTitle {
				texts[in] += string(e)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "text":
				in = -1
			case "title":
				inTitle = false
			}
		}
	}
}

// A long series name, as compare gives a configured profile, fits in the
// picture: the legend column grows with it (it was cut at the right edge,
// "bullmq:type=exponential,d"). An absurdly long one is cut with "…" and
// shown whole in its tooltip, so the picture stays bounded.
func TestLegendFitsTheWidth(t *testing.T) {
	long := "bullmq:type=exponential,delay=1000,attempts=25"
	huge := strings.Repeat("celery:retry_backoff=2,", 20)
	pts := []Point{{1, time.Second, time.Second, time.Second}, {2, 2 * time.Second, 2 * time.Second, 2 * time.Second}}
	for _, names := range [][]string{{"ojs", long}, {huge, "ojs"}} {
		var d Delays
		var b Bars
		for _, n := range names {
			d.Series = append(d.Series, Series{Name: n, Points: pts})
			b.Panels = append(b.Panels, Panel{Name: n, Counts: []int{1, 2}})
		}
		b.Bucket = time.Second
		for kind, w := range map[string]interface{ WriteSVG(io.Writer) error }{"delays": d, "bars": b} {
			var buf bytes.Buffer
			if err := w.WriteSVG(&buf); err != nil {
				t.Fatal(err)
			}
			width, xs, texts := legendTexts(t, buf.Bytes())
			if len(texts) != len(names) {
				t.Fatalf("%s: legend texts %q", kind, texts)
			}
			for i, s := range texts {
				// 7.5 units a character: DejaVu Sans at 13px averages less.
				if end := xs[i] + 7.5*float64(len([]rune(s))); end > width {
					t.Errorf("%s: legend %q ends near %.0f, past the width %.0f", kind, s, end, width)
				}
				if n := len([]rune(s)); n > 80 {
					t.Errorf("%s: legend of %d characters, want it cut", kind, n)
				}
			}
			if names[0] == huge && (!strings.HasSuffix(texts[0], "…") || !strings.Contains(buf.String(), "<title>"+huge+"</title>")) {
				t.Errorf("%s: a huge name is not cut with its tooltip: %q", kind, texts[0])
			}
			if width > 2000 {
				t.Errorf("%s: width %.0f", kind, width)
			}
		}
	}
}
