package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// clock is a fake time source advanced by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestLineModeSteps(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	b := New(&buf, 100, Opts{Prefix: "epoch 1", Unit: "samples", Now: c.Now})
	if b.term {
		t.Fatal("a bytes.Buffer must not be treated as a terminal")
	}
	for range 100 {
		c.Advance(10 * time.Millisecond)
		b.Add(1)
	}
	b.SetSuffix("loss=0.1234")
	b.Finish()
	got := lines(buf.String())
	// One line per 10% step from 10% to 90%, then the final line.
	if len(got) != 10 {
		t.Fatalf("got %d lines, want 10:\n%s", len(got), buf.String())
	}
	if want := "epoch 1  10% 10/100 samples 100 samples/s ETA 0.9s"; got[0] != want {
		t.Errorf("first line\n got %q\nwant %q", got[0], want)
	}
	if want := "epoch 1 100% 100/100 samples 100 samples/s in 1.0s loss=0.1234"; got[9] != want {
		t.Errorf("final line\n got %q\nwant %q", got[9], want)
	}
	if strings.ContainsAny(buf.String(), "\r[") {
		t.Errorf("line mode must not draw a bar or use \\r: %q", buf.String())
	}
}

func TestLineModeInterval(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	b := New(&buf, 0, Opts{Unit: "B", LineInterval: 5 * time.Second, Now: c.Now})
	for range 20 {
		c.Advance(time.Second)
		b.Add(1 << 20)
	}
	b.Finish()
	got := lines(buf.String())
	// Unknown total: lines only every 5s (at 5, 10, 15, 20s) plus Finish.
	if len(got) != 5 {
		t.Fatalf("got %d lines, want 5:\n%s", len(got), buf.String())
	}
	if want := "5.0 MiB 1.0 MiB/s"; got[0] != want {
		t.Errorf("got %q, want %q", got[0], want)
	}
	if want := "20.0 MiB 1.0 MiB/s in 20s"; got[4] != want {
		t.Errorf("got %q, want %q", got[4], want)
	}
}

func TestLineModeStepsOff(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	b := New(&buf, 10, Opts{LineStep: -1, LineInterval: -1, Now: c.Now})
	for range 10 {
		c.Advance(time.Hour)
		b.Add(1)
	}
	if buf.Len() != 0 {
		t.Fatalf("want no lines before Finish, got %q", buf.String())
	}
	b.Finish()
	b.Finish()
	if n := len(lines(buf.String())); n != 1 {
		t.Fatalf("got %d lines, want 1: %q", n, buf.String())
	}
}

func TestTerminalMode(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	b := New(&buf, 1000, Opts{Prefix: "f.gz", Unit: "B", Mode: Terminal, Width: 10, Now: c.Now})
	b.Add(100) // first draw is immediate
	b.Add(100) // rate-limited: same instant
	c.Advance(50 * time.Millisecond)
	b.Add(100) // still within Refresh
	c.Advance(60 * time.Millisecond)
	b.Add(700)
	b.Finish()
	out := buf.String()
	frames := strings.Split(out, "\r")[1:]
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3: %q", len(frames), out)
	}
	if want := "f.gz [=>        ]  10% 100 B/1000 B -- B/s ETA --"; frames[0] != want {
		t.Errorf("frame 0\n got %q\nwant %q", frames[0], want)
	}
	if !strings.HasPrefix(frames[1], "f.gz [==========] 100% 1000 B/1000 B 8.9 KiB/s ETA 0.0s") {
		t.Errorf("frame 1: %q", frames[1])
	}
	if !strings.HasSuffix(frames[2], "\n") || !strings.Contains(frames[2], "in 0.1s") {
		t.Errorf("final frame must end the line: %q", out)
	}
}

func TestTerminalBlanksShorterLine(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	b := New(&buf, 10, Opts{Mode: Terminal, Now: c.Now})
	b.SetSuffix(strings.Repeat("x", 30))
	b.Add(1)
	b.SetSuffix("")
	c.Advance(time.Second)
	b.Add(1)
	frames := strings.Split(buf.String(), "\r")[1:]
	if len(frames) != 2 || len(frames[1]) != len(frames[0]) {
		t.Fatalf("the second frame must be padded to the first's length: %q", frames)
	}
}

func TestSetAndCurrent(t *testing.T) {
	b := New(nil, 10, Opts{})
	b.Set(7)
	b.Add(2)
	if got := b.Current(); got != 9 {
		t.Fatalf("Current = %d, want 9", got)
	}
	b.Finish() // nil writer: draws nothing, must not panic
}

func TestWriteCounts(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 0, Opts{Mode: Lines})
	n, err := b.Write(make([]byte, 1234))
	if n != 1234 || err != nil || b.Current() != 1234 {
		t.Fatalf("Write = %d, %v; Current = %d", n, err, b.Current())
	}
}

func TestConcurrentAdd(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 8000, Opts{Mode: Terminal, Refresh: time.Microsecond})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				b.Add(1)
			}
		})
	}
	wg.Wait()
	b.Finish()
	if b.Current() != 8000 {
		t.Fatalf("Current = %d, want 8000", b.Current())
	}
	if !strings.Contains(buf.String(), "100% 8000/8000") {
		t.Fatalf("final frame missing: %q", buf.String()[max(0, buf.Len()-200):])
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("bytes.Buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is not a terminal")
	}
	if IsTerminal((*os.File)(nil)) {
		t.Error("a nil file is not a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !IsTerminal(tty) {
			t.Error("/dev/tty is a terminal")
		}
	}
}

func TestFormatters(t *testing.T) {
	for _, c := range []struct {
		n    float64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {26421856, "25.2 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%v) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{-time.Second, "0.0s"}, {300 * time.Millisecond, "0.3s"}, {45 * time.Second, "45s"},
		{187 * time.Second, "3m07s"}, {2*time.Hour + 5*time.Minute, "2h05m"}} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	b := New(nil, 0, Opts{Unit: "samples"})
	for _, c := range []struct {
		r    float64
		want string
	}{{5.25, "5.2 samples/s"}, {512, "512 samples/s"}, {25000, "25.0k samples/s"}, {3.2e6, "3.2M samples/s"}} {
		if got := b.rate(c.r); got != c.want {
			t.Errorf("rate(%v) = %q, want %q", c.r, got, c.want)
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, os.ErrClosed
}

func TestWriterErrorStopsDrawing(t *testing.T) {
	w := &failWriter{}
	b := New(w, 10, Opts{Mode: Terminal, Refresh: time.Nanosecond})
	for range 10 {
		b.Add(1)
	}
	b.Finish()
	if w.n != 1 {
		t.Fatalf("writer called %d times after failing, want 1", w.n)
	}
}

func TestPrintln(t *testing.T) {
	t.Run("terminal", func(t *testing.T) {
		var buf bytes.Buffer
		b := New(&buf, 10, Opts{Prefix: "p", Mode: Terminal, Width: 4, Now: newClock().Now})
		b.Add(5)
		before := buf.Len()
		b.Println("step 5: loss 1.0")
		got := buf.String()[before:]
		// Blank the bar's line, print the message, redraw the bar below.
		blank := "\r" + strings.Repeat(" ", before-1) + "\r"
		if !strings.HasPrefix(got, blank+"step 5: loss 1.0\n\rp [==> ]  50% 5/10") {
			t.Errorf("got %q", got)
		}
		if b.Current() != 5 {
			t.Errorf("Println counted: current %d", b.Current())
		}
	})
	t.Run("lines", func(t *testing.T) {
		var buf bytes.Buffer
		b := New(&buf, 10, Opts{Prefix: "p", Mode: Lines, Now: newClock().Now})
		b.Println("hello")
		b.Finish()
		b.Println("after")
		l := lines(buf.String())
		if len(l) != 3 || l[0] != "hello" || l[2] != "after" {
			t.Errorf("lines %q", l)
		}
	})
}

// TestTerminalFitsWidth: in terminal mode no frame reaches the
// terminal's last column, multi-byte prefixes included, so a redraw never
// wraps (a wrapped line left one stale row per redraw on an 80-column
// terminal).
func TestTerminalFitsWidth(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   Opts
		env    string
		maxLen int
	}{
		{"Columns", Opts{Columns: 40}, "", 39},
		{"COLUMNS", Opts{}, "50", 49},
		{"default", Opts{}, "", 79},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("COLUMNS", c.env)
			var buf bytes.Buffer
			clock := newClock()
			o := c.opts
			o.Prefix, o.Mode, o.Now, o.Unit = "Époque 1/10 — entraînement", Terminal, clock.Now, "samples"
			b := New(&buf, 60000, o)
			b.SetSuffix("loss=0.4213 acc=0.8765 lr=0.0100 " + strings.Repeat("x", 60))
			for range 5 {
				b.Add(12000)
				clock.Advance(time.Second)
			}
			b.Println("validation accuracy 0.8812")
			b.Finish()
			for _, frame := range strings.Split(buf.String(), "\r") {
				for _, line := range strings.Split(frame, "\n") {
					if n := utf8.RuneCountInString(line); n > c.maxLen {
						t.Fatalf("a %d-character line on a %d-column terminal: %q", n, c.maxLen+1, line)
					}
				}
			}
		})
	}
	if got := cut("ab€d", 3); got != "ab€" {
		t.Errorf("cut = %q, want ab€", got)
	}
}
