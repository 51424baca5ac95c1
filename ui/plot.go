package ui

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/memory"
)

// Colours of the metrics plot.
var (
	plotCPU  = color.NRGBA{0x16, 0xa3, 0x4a, 0xff}
	plotRSS  = color.NRGBA{0x25, 0x63, 0xeb, 0xff}
	plotAxis = color.NRGBA{0x47, 0x55, 0x69, 0xff}
	plotGrid = color.NRGBA{0xe2, 0xe8, 0xf0, 0xff}
)

// MetricsPlot draws a run's CPU % (green, left axis) and RSS in MB (blue,
// right axis) against seconds since the start, with tick labels.
type MetricsPlot struct {
	widget.BaseWidget
	samples []memory.Sample
}

// NewMetricsPlot returns an empty plot.
func NewMetricsPlot() *MetricsPlot {
	m := &MetricsPlot{}
	m.ExtendBaseWidget(m)
	return m
}

// SetSamples replaces the plotted samples.
func (m *MetricsPlot) SetSamples(s []memory.Sample) {
	m.samples = s
	m.Refresh()
}

// niceTicks returns 3–6 round tick values from 0 to at least top.
func niceTicks(top float64) []float64 {
	if top <= 0 || math.IsNaN(top) || math.IsInf(top, 0) {
		top = 1
	}
	raw := top / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := 0.0; ; v += step {
		out = append(out, v)
		if v >= top-1e-9 {
			break
		}
	}
	return out
}

// tickLabel prints a tick value without needless decimals.
func tickLabel(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// CreateRenderer implements fyne.Widget.
func (m *MetricsPlot) CreateRenderer() fyne.WidgetRenderer {
	r := &plotRenderer{m: m, bg: canvas.NewRectangle(color.NRGBA{0xf8, 0xfa, 0xfc, 0xff})}
	r.bg.StrokeColor = color.NRGBA{0xcb, 0xd5, 0xe1, 0xff}
	r.bg.StrokeWidth = 1
	return r
}

type plotRenderer struct {
	m    *MetricsPlot
	bg   *canvas.Rectangle
	objs []fyne.CanvasObject
}

func (r *plotRenderer) Destroy()           {}
func (r *plotRenderer) MinSize() fyne.Size { return fyne.NewSize(240, 120) }
func (r *plotRenderer) Refresh()           { r.Layout(r.m.Size()); canvas.Refresh(r.m) }
func (r *plotRenderer) Objects() []fyne.CanvasObject {
	return append([]fyne.CanvasObject{r.bg}, r.objs...)
}

func (r *plotRenderer) label(s string, c color.Color, pos fyne.Position, align fyne.TextAlign) {
	t := canvas.NewText(s, c)
	t.TextSize = 10
	sz := t.MinSize()
	switch align {
	case fyne.TextAlignTrailing:
		pos.X -= sz.Width
	case fyne.TextAlignCenter:
		pos.X -= sz.Width / 2
	}
	t.Move(fyne.NewPos(pos.X, pos.Y-sz.Height/2))
	r.objs = append(r.objs, t)
}

func (r *plotRenderer) line(c color.Color, w float32, a, b fyne.Position) {
	l := canvas.NewLine(c)
	l.StrokeWidth = w
	l.Position1, l.Position2 = a, b
	r.objs = append(r.objs, l)
}

// Layout draws the axes (CPU % left, RSS MB right, seconds below), their
// tick labels and grid, then the two series.
func (r *plotRenderer) Layout(s fyne.Size) {
	r.bg.Resize(s)
	r.objs = r.objs[:0]
	ss := r.m.samples
	if len(ss) == 0 {
		r.label("no metric samples for this run", plotAxis, fyne.NewPos(8, 12), fyne.TextAlignLeading)
		return
	}
	maxCPU, maxRSS, peakCPU := 100.0, 1.0, 0.0
	for _, x := range ss {
		maxCPU = max(maxCPU, x.CPUPercent)
		peakCPU = max(peakCPU, x.CPUPercent)
		maxRSS = max(maxRSS, float64(x.RSS)/(1<<20))
	}
	end := ss[len(ss)-1].At.Seconds()
	if end <= 0 {
		end = 1
	}
	cpuTicks, rssTicks, timeTicks := niceTicks(maxCPU), niceTicks(maxRSS), niceTicks(end)
	cpuTop, rssTop, timeTop := cpuTicks[len(cpuTicks)-1], rssTicks[len(rssTicks)-1], timeTicks[len(timeTicks)-1]
	const left, right, top, bottom = 40, 46, 22, 30
	x0, y0 := float32(left), s.Height-bottom
	w, h := s.Width-left-right, s.Height-top-bottom
	if w <= 10 || h <= 10 {
		return
	}
	xAt := func(sec float64) float32 { return x0 + w*float32(sec/timeTop) }
	yAt := func(frac float64) float32 { return y0 - h*float32(frac) }
	// Grid and axes.
	for _, v := range cpuTicks {
		y := yAt(v / cpuTop)
		r.line(plotGrid, 1, fyne.NewPos(x0, y), fyne.NewPos(x0+w, y))
		r.label(tickLabel(v), plotCPU, fyne.NewPos(x0-4, y), fyne.TextAlignTrailing)
	}
	for _, v := range rssTicks {
		r.label(tickLabel(v), plotRSS, fyne.NewPos(x0+w+4, yAt(v/rssTop)), fyne.TextAlignLeading)
	}
	for _, v := range timeTicks {
		x := xAt(v)
		r.line(plotAxis, 1, fyne.NewPos(x, y0), fyne.NewPos(x, y0+4))
		r.label(tickLabel(v), plotAxis, fyne.NewPos(x, y0+11), fyne.TextAlignCenter)
	}
	r.line(plotAxis, 1, fyne.NewPos(x0, y0), fyne.NewPos(x0+w, y0))
	r.line(plotCPU, 1, fyne.NewPos(x0, y0), fyne.NewPos(x0, y0-h))
	r.line(plotRSS, 1, fyne.NewPos(x0+w, y0), fyne.NewPos(x0+w, y0-h))
	r.label("CPU %", plotCPU, fyne.NewPos(4, 10), fyne.TextAlignLeading)
	r.label("RSS MB", plotRSS, fyne.NewPos(s.Width-4, 10), fyne.TextAlignTrailing)
	r.label("time (s)", plotAxis, fyne.NewPos(x0+w/2, s.Height-7), fyne.TextAlignCenter)
	r.label(fmt.Sprintf("peak CPU %.0f %% · peak RSS %s · %s", peakCPU, humanBytes(int64(maxRSS*(1<<20))), (time.Duration(end*float64(time.Second))).Round(time.Millisecond)),
		plotAxis, fyne.NewPos(x0+w/2, 10), fyne.TextAlignCenter)
	// Series.
	for i := 1; i < len(ss); i++ {
		a, b := ss[i-1], ss[i]
		r.line(plotCPU, 1.5, fyne.NewPos(xAt(a.At.Seconds()), yAt(a.CPUPercent/cpuTop)), fyne.NewPos(xAt(b.At.Seconds()), yAt(b.CPUPercent/cpuTop)))
		r.line(plotRSS, 1.5, fyne.NewPos(xAt(a.At.Seconds()), yAt(float64(a.RSS)/(1<<20)/rssTop)), fyne.NewPos(xAt(b.At.Seconds()), yAt(float64(b.RSS)/(1<<20)/rssTop)))
	}
}
