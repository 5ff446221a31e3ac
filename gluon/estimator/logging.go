package estimator

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/goluon/goluon/gluon/progress"
)

// Logger shows a progress bar while an epoch runs (samples/s, ETA, the
// running loss) and prints a Keras-like line per epoch:
//
//	Epoch 3/10 - 12.3s - 9834 samples/s - loss: 0.4567 - accuracy: 0.8312 - val_loss: 0.4012 - val_accuracy: 0.8521
//
// On a terminal the bar redraws in place; otherwise (a log file, CI) it
// degrades to an occasional plain line. Set NoBar to print only the epoch
// lines.
type Logger struct {
	NopHandler
	W     io.Writer
	NoBar bool
	Mode  progress.Mode // progress.Auto by default
	bar   *progress.Bar
}

// EpochBegin starts the epoch's progress bar.
func (l *Logger) EpochBegin(s *State) error {
	if l.NoBar || s.Batches <= 0 {
		return nil
	}
	l.bar = progress.New(l.W, int64(s.Batches), progress.Opts{
		Prefix: fmt.Sprintf("Epoch %d/%d", s.Epoch, s.Epochs), Unit: "batches", Mode: l.Mode,
	})
	return nil
}

// BatchEnd advances the bar.
func (l *Logger) BatchEnd(s *State) error {
	if l.bar != nil {
		l.bar.SetSuffix(fmt.Sprintf("%.0f samples/s - loss %.4f", s.SamplesRate, s.Train["loss"]))
		l.bar.Set(int64(s.Batch))
	}
	return nil
}

// EpochEnd closes the bar and prints the epoch's line.
func (l *Logger) EpochEnd(s *State) error {
	if l.bar != nil {
		l.bar.Finish()
		l.bar = nil
	}
	_, err := fmt.Fprintln(l.W, EpochLine(s))
	return err
}

// EpochLine formats the Keras-like summary of an epoch.
func EpochLine(s *State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Epoch %d/%d - %.1fs - %.0f samples/s", s.Epoch, s.Epochs, s.EpochTime.Seconds(), s.SamplesRate)
	for _, k := range orderedKeys(s.Train) {
		fmt.Fprintf(&b, " - %s: %.4f", k, s.Train[k])
	}
	for _, k := range orderedKeys(s.Val) {
		fmt.Fprintf(&b, " - val_%s: %.4f", k, s.Val[k])
	}
	return b.String()
}

// orderedKeys puts "loss" first, then the rest alphabetically.
func orderedKeys(m map[string]float64) []string {
	var ks []string
	for k := range m {
		if k != "loss" {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	if _, ok := m["loss"]; ok {
		ks = append([]string{"loss"}, ks...)
	}
	return ks
}
