// Package progress draws a progress bar for long work: downloads, training
// epochs, evaluation passes.
//
// A Bar shows the amount done, a percentage, the rate, the time left and an
// optional suffix (a running loss, say):
//
//	train-images-idx3-ubyte.gz [=========>          ]  48% 12.6 MiB/26.4 MiB 3.1 MiB/s ETA 4s
//
// On a terminal the bar redraws itself in place with a carriage return, at
// most once per Opts.Refresh, cut to the terminal's width. Anywhere else (a log file, a CI console, a
// bytes.Buffer) it prints plain lines instead, and only when Opts.LineStep
// of the total has been done or Opts.LineInterval has passed since the last
// line, so logs stay short. All methods are safe for concurrent use: many
// goroutines may Add to one Bar.
package progress

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Mode chooses how a Bar draws itself.
type Mode int

const (
	// Auto draws in place when the writer is a terminal (an *os.File whose
	// mode is a character device) and prints plain lines otherwise.
	Auto Mode = iota
	// Terminal always redraws in place with a carriage return.
	Terminal
	// Lines always prints plain, rate-limited lines.
	Lines
)

// Opts configures a Bar. The zero value is usable.
type Opts struct {
	// Prefix is printed first, e.g. a file name or "epoch 3".
	Prefix string
	// Unit names what is counted. "B" formats amounts and rates as human
	// sizes (KiB, MiB, GiB); any other unit ("samples", "batches") is
	// printed after plain counts. Empty means no unit.
	Unit string
	// Width is the number of cells inside the bar's brackets (default 20).
	Width int
	// Mode chooses terminal or line drawing (default Auto).
	Mode Mode
	// Refresh is the shortest time between two redraws in terminal mode
	// (default 100ms).
	Refresh time.Duration
	// LineInterval is the longest time between two lines in line mode
	// (default 10s); a negative value turns time-driven lines off.
	LineInterval time.Duration
	// LineStep is the fraction of the total after which line mode prints
	// again (default 0.1, a line every 10%); a negative value turns
	// step-driven lines off.
	LineStep float64
	// Columns is the terminal's width, to which terminal mode cuts its
	// line: a line that wrapped would leave one stale row per redraw.
	// Zero asks the terminal (Linux), then reads $COLUMNS, then takes 80.
	Columns int
	// Now replaces time.Now (for tests and examples).
	Now func() time.Time
}

// Bar is a progress bar writing to one io.Writer. Create it with New.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	o        Opts
	term     bool
	total    int64
	cur      int64
	suffix   string
	start    time.Time
	lastDraw time.Time
	lastLine int64 // amount done when the last line was printed
	lastLen  int   // length of the last in-place line, to blank it
	drawn    bool
	done     bool
	failed   bool // the writer returned an error: stop drawing
}

// New returns a Bar for total units of work written to w; a total <= 0
// means the total is not known (no bar, percentage or ETA are shown until
// SetTotal gives one). A nil w gives a Bar that draws nothing.
func New(w io.Writer, total int64, o Opts) *Bar {
	if o.Width <= 0 {
		o.Width = 20
	}
	if o.Refresh <= 0 {
		o.Refresh = 100 * time.Millisecond
	}
	if o.LineInterval == 0 {
		o.LineInterval = 10 * time.Second
	}
	if o.LineStep == 0 {
		o.LineStep = 0.1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	b := &Bar{w: w, o: o, total: total, start: o.Now()}
	switch o.Mode {
	case Terminal:
		b.term = true
	case Lines:
		b.term = false
	default:
		b.term = IsTerminal(w)
	}
	b.lastDraw = b.start
	return b
}

// columns returns the width terminal mode draws within: Opts.Columns, or
// the terminal's width, or $COLUMNS, or 80.
func (b *Bar) columns() int {
	if b.o.Columns > 0 {
		return b.o.Columns
	}
	if f, ok := b.w.(*os.File); ok && f != nil {
		if n := termColumns(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// cut returns s cut to at most n characters (at least 1).
func cut(s string, n int) string {
	n = max(n, 1)
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// IsTerminal reports whether w is an *os.File open on a character device
// (a terminal), which is how Auto mode decides to redraw in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Add records n more units of work done.
func (b *Bar) Add(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cur += n
	b.maybeDraw()
}

// Set records the amount of work done so far.
func (b *Bar) Set(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cur = n
	if n < b.lastLine {
		b.lastLine = n
	}
	b.maybeDraw()
}

// Write counts len(p) bytes as done and never fails, so that a Bar can sit
// in an io.MultiWriter or io.TeeReader beside the real destination.
func (b *Bar) Write(p []byte) (int, error) {
	b.Add(int64(len(p)))
	return len(p), nil
}

// Println prints a message on a line of its own (an evaluation's result,
// say) without breaking the bar: on a terminal the bar's line is blanked,
// the message printed and the bar redrawn below it; elsewhere the message
// is one more line. It counts nothing. After Finish it just prints.
func (b *Bar) Println(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed || b.w == nil {
		return
	}
	out := msg + "\n"
	redraw := b.term && b.drawn && !b.done
	if redraw {
		out = "\r" + strings.Repeat(" ", b.lastLen) + "\r" + out
		b.lastLen = 0
	}
	if _, err := io.WriteString(b.w, out); err != nil {
		b.failed = true
		return
	}
	if redraw {
		b.draw(b.o.Now(), false)
	}
}

// SetTotal changes the total (for instance once a download's length is
// known); a total <= 0 means unknown.
func (b *Bar) SetTotal(total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = total
}

// SetSuffix sets the text printed after the statistics, such as
// "loss=0.4213"; it shows from the next redraw on.
func (b *Bar) SetSuffix(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.suffix = s
}

// Current returns the amount of work recorded so far.
func (b *Bar) Current() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// Finish draws the final state (with the elapsed time in place of the
// ETA) and ends the line. Later calls to Finish do nothing, and later
// calls to Add or Set only count.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	b.draw(b.o.Now(), true)
}

// maybeDraw redraws if the mode's rate limit allows; b.mu is held.
func (b *Bar) maybeDraw() {
	if b.done || b.failed || b.w == nil {
		return
	}
	now := b.o.Now()
	if b.term {
		if !b.drawn || now.Sub(b.lastDraw) >= b.o.Refresh {
			b.draw(now, false)
		}
		return
	}
	due := b.o.LineInterval > 0 && now.Sub(b.lastDraw) >= b.o.LineInterval
	if b.total > 0 && b.o.LineStep > 0 {
		step := int64(b.o.LineStep * float64(b.total))
		if step < 1 {
			step = 1
		}
		// Print when the amount crosses the next multiple of the step.
		if b.cur/step > b.lastLine/step && b.cur < b.total {
			due = true
		}
	}
	if due {
		b.draw(now, false)
	}
}

// draw writes the current state; b.mu is held.
func (b *Bar) draw(now time.Time, final bool) {
	if b.failed || b.w == nil {
		return
	}
	line := b.render(now, final)
	var out string
	if b.term {
		line = cut(line, b.columns()-1) // writing the last column wraps on some terminals
		pad, n := "", utf8.RuneCountInString(line)
		if b.lastLen > n {
			pad = strings.Repeat(" ", b.lastLen-n)
		}
		out = "\r" + line + pad
		if final {
			out += "\n"
		}
		b.lastLen = n
	} else {
		out = line + "\n"
	}
	if _, err := io.WriteString(b.w, out); err != nil {
		b.failed = true
	}
	b.drawn = true
	b.lastDraw = now
	b.lastLine = b.cur
}
