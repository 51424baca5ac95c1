package ui

import (
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"

	"codeloom/app/memory"
)

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		top  float64
		want []float64
	}{
		{100, []float64{0, 25, 50, 75, 100}},
		{3.2, []float64{0, 1, 2, 3, 4}},
		{180, []float64{0, 50, 100, 150, 200}},
	} {
		if got := niceTicks(c.top); !slices.Equal(got, c.want) {
			t.Errorf("niceTicks(%v) = %v, want %v", c.top, got, c.want)
		}
	}
}

func TestPlotHasAxesWithUnitsAndTicks(t *testing.T) {
	test.NewTempApp(t)
	p := NewMetricsPlot()
	w := test.NewWindow(p)
	defer w.Close()
	w.Resize(fyne.NewSize(500, 220))
	p.SetSamples([]memory.Sample{
		{At: 0, CPUPercent: 10, RSS: 20 << 20},
		{At: 1500 * time.Millisecond, CPUPercent: 95, RSS: 60 << 20},
		{At: 3200 * time.Millisecond, CPUPercent: 40, RSS: 70 << 20},
	})
	texts := map[string]bool{}
	for _, o := range test.WidgetRenderer(p).Objects() {
		if tx, ok := o.(*canvas.Text); ok {
			texts[tx.Text] = true
		}
	}
	for _, want := range []string{"CPU %", "RSS MB", "time (s)", "0", "50", "100", "4", "80"} {
		if !texts[want] {
			t.Errorf("plot lacks the label %q (has %v)", want, texts)
		}
	}
}
