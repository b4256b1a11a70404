package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
)

// WriteMetricsTimeline draws the evictions accepted over time as each run's own metrics
// endpoint served them (kubectl_maintenance_evictions_total{outcome="accepted"}, scraped
// every second: F1's drain --metrics-bind-address, F5's controller), one line per result
// that has a MetricsTimeline, as a PNG. It reports whether there was anything to draw.
func WriteMetricsTimeline(w io.Writer, results []Result) (bool, error) {
	const W, H, left, bottom, top, right = 900, 360, 50, 40, 30, 200
	var rs []Result
	maxT, maxY := 1.0, 1.0
	for _, r := range results {
		if len(r.MetricsTimeline) == 0 {
			continue
		}
		rs = append(rs, r)
		for _, p := range r.MetricsTimeline {
			maxT, maxY = max(maxT, p[0]), max(maxY, p[1])
		}
	}
	if len(rs) == 0 {
		return false, nil
	}
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	x := func(t float64) int { return left + int(t/maxT*float64(W-left-right)) }
	y := func(v float64) int { return H - bottom - int(v/maxY*float64(H-top-bottom)) }
	black, grey := color.RGBA{0, 0, 0, 0xff}, color.RGBA{0xcc, 0xcc, 0xcc, 0xff}
	line(img, left, H-bottom, W-right, H-bottom, black)
	line(img, left, top, left, H-bottom, black)
	for v := 0.0; v <= maxY; v += niceStep(maxY) {
		line(img, left+1, y(v), W-right, y(v), grey)
		text(img, 10, y(v)+4, fmt.Sprintf("%.0f", v), black)
	}
	for t := 0.0; t <= maxT; t += niceStep(maxT) {
		text(img, x(t)-8, H-bottom+16, fmt.Sprintf("%.0fs", t), black)
	}
	text(img, left, 18, "evictions accepted over time, from each run's metrics endpoint", black)
	for i, r := range rs {
		c := toolColors[r.Tool]
		prevX, prevY := x(0), y(0)
		for _, p := range r.MetricsTimeline {
			line(img, prevX, prevY, x(p[0]), y(p[1]), c)
			prevX, prevY = x(p[0]), y(p[1])
		}
		ly := top + 20 + i*20
		draw.Draw(img, image.Rect(W-right+10, ly-8, W-right+22, ly+2), &image.Uniform{c}, image.Point{}, draw.Src)
		text(img, W-right+28, ly, fmt.Sprintf("%s %s %.1fs", r.Phase, r.Tool, r.WallSec), black)
	}
	return true, png.Encode(w, img)
}
