package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

var toolColors = map[string]color.RGBA{
	"ours":        {0x1f, 0x77, 0xb4, 0xff},
	"kubectl-seq": {0xd6, 0x27, 0x28, 0xff},
	"kubectl-par": {0xff, 0x7f, 0x0e, 0xff},
	"controller":  {0x2c, 0xa0, 0x2c, 0xff},
}

// WriteTimeline draws, for one phase, the unavailable pods of its main PDB over time for
// each tool (a step line per tool), with axes and a legend, as a PNG.
func WriteTimeline(w io.Writer, phase string, results []Result) error {
	const W, H, left, bottom, top, right = 900, 360, 50, 40, 30, 160
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	maxT, maxY := 1.0, 1.0
	for _, r := range results {
		maxT = max(maxT, r.WallSec)
		for _, p := range r.Timeline {
			maxT, maxY = max(maxT, p[0]), max(maxY, p[1])
		}
	}
	x := func(t float64) int { return left + int(t/maxT*float64(W-left-right)) }
	y := func(v float64) int { return H - bottom - int(v/maxY*float64(H-top-bottom)) }
	black := color.RGBA{0, 0, 0, 0xff}
	grey := color.RGBA{0xcc, 0xcc, 0xcc, 0xff}
	line(img, left, H-bottom, W-right, H-bottom, black)
	line(img, left, top, left, H-bottom, black)
	// At most about 10 labelled grid lines on each axis, whatever the scale (a fleet's
	// hundreds of unavailable pods would otherwise print one label per pixel row).
	for v := 0.0; v <= maxY; v += niceStep(maxY) {
		line(img, left+1, y(v), W-right, y(v), grey)
		text(img, 10, y(v)+4, fmt.Sprintf("%.0f", v), black)
	}
	for t := 0.0; t <= maxT; t += niceStep(maxT) {
		text(img, x(t)-8, H-bottom+16, fmt.Sprintf("%.0fs", t), black)
	}
	title := fmt.Sprintf("%s: unavailable pods of the main PDB over time", phase)
	if strings.HasPrefix(phase, "F") { // the fleet profile
		title = fmt.Sprintf("%s: unavailable pods summed over every PDB, over time", phase)
	}
	text(img, left, 18, title, black)
	for i, r := range results {
		c := toolColors[r.Tool]
		prevX, prevY := x(0), y(0)
		for _, p := range r.Timeline {
			line(img, prevX, prevY, x(p[0]), prevY, c)
			line(img, x(p[0]), prevY, x(p[0]), y(p[1]), c)
			prevX, prevY = x(p[0]), y(p[1])
		}
		line(img, prevX, prevY, x(r.WallSec), prevY, c)
		ly := top + 20 + i*20
		draw.Draw(img, image.Rect(W-right+10, ly-8, W-right+22, ly+2), &image.Uniform{c}, image.Point{}, draw.Src)
		text(img, W-right+28, ly, fmt.Sprintf("%s %.1fs", r.Tool, r.WallSec), black)
	}
	return png.Encode(w, img)
}

// niceStep is the smallest of 1, 2, 5, 10, 20, 30, 60, 120, 300 and 600 that divides
// span into at most 12 steps (600 beyond).
func niceStep(span float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 20, 30, 60, 120, 300} {
		if span/s <= 12 {
			return s
		}
	}
	return 600
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// line draws a line (Bresenham), two pixels thick.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		img.Set(x0+1, y0, c)
		img.Set(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
