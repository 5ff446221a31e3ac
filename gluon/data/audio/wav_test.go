package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/internal/goldentest"
)

// wavCase is one fixture of testdata/wav.json: what torchaudio.load
// (normalize=True) read from the file.
type wavCase struct {
	File, Encoding string
	SampleRate     int `json:"sample_rate"`
	Bits           int
	Samples        goldentest.Tensor
}

// encoding is the fixture's Encoding, from torchaudio.info's.
func (c wavCase) encoding() Encoding {
	switch c.Encoding + string(rune('0'+c.Bits/8)) {
	case "PCM_U1":
		return PCMU8
	case "PCM_S2", "PCM_S16LE0":
		return PCMS16
	case "PCM_S3":
		return PCMS24
	case "PCM_S4":
		return PCMS32
	case "PCM_F4":
		return Float32
	case "PCM_F8":
		return Float64
	}
	return 0
}

// TestWAVFixtures reads every fixture and compares with torchaudio.load.
func TestWAVFixtures(t *testing.T) {
	for _, c := range goldentest.Cases[wavCase](t, "testdata/wav.json") {
		t.Run(c.File, func(t *testing.T) {
			w, err := LoadWAV(filepath.Join("testdata", c.File))
			if err != nil {
				t.Fatal(err)
			}
			if w.SampleRate != c.SampleRate {
				t.Errorf("sample rate %d, torchaudio %d", w.SampleRate, c.SampleRate)
			}
			if want := c.encoding(); w.Encoding != want {
				t.Errorf("encoding %v, torchaudio %s %d bits (%v)", w.Encoding, c.Encoding, c.Bits, want)
			}
			if got := []int{w.Channels, w.Frames()}; !slices.Equal(got, c.Samples.Shape) {
				t.Fatalf("shape %v, torchaudio %v", got, c.Samples.Shape)
			}
			for i, v := range w.Samples {
				if float64(v) != c.Samples.Data[i] {
					t.Fatalf("sample %d = %.9g, torchaudio %.9g", i, v, c.Samples.Data[i])
				}
			}
		})
	}
}

// TestWAVRewrite writes each fixture's samples back in its own encoding:
// the bytes are libsox's (torchaudio.save) and Python's wave module's,
// and reading them again gives the same samples.
func TestWAVRewrite(t *testing.T) {
	same := map[string]bool{ // files whose header layout WriteWAV shares
		"s16_stereo.wav": true, "f32_stereo.wav": true, "f64_mono.wav": true,
		"s24_3ch_ext.wav": true, "s16_3ch_ext.wav": true, "u8_stereo_sox.wav": true,
	}
	for _, c := range goldentest.Cases[wavCase](t, "testdata/wav.json") {
		t.Run(c.File, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.File))
			if err != nil {
				t.Fatal(err)
			}
			w, err := ReadWAV(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteWAV(&b, w, w.Encoding); err != nil {
				t.Fatal(err)
			}
			if same[c.File] && !bytes.Equal(b.Bytes(), raw) {
				t.Errorf("rewritten:\n% x\nfixture:\n% x", b.Bytes(), raw)
			}
			back, err := ReadWAV(&b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.Samples, w.Samples) || back.Channels != w.Channels || back.SampleRate != w.SampleRate || back.Encoding != w.Encoding {
				t.Errorf("round trip changed the waveform: %+v, read %+v", back, w)
			}
		})
	}
}

// TestWAVRoundTrip saves a stereo signal in every encoding and reads it
// back, within half a step of the encoding or of libsox's 2⁻²⁴ grid.
func TestWAVRoundTrip(t *testing.T) {
	const frames = 101
	w := Waveform{SampleRate: 11025, Channels: 2, Samples: make([]float32, 2*frames)}
	for i := range w.Samples {
		w.Samples[i] = float32(math.Sin(float64(i) * 0.37))
	}
	w.Samples[0], w.Samples[1], w.Samples[2] = 1, -1, 1.5 // the extremes, and a clipped one
	dir := t.TempDir()
	for _, enc := range []Encoding{PCMU8, PCMS16, PCMS24, PCMS32, Float32, Float64} {
		t.Run(enc.String(), func(t *testing.T) {
			path := filepath.Join(dir, enc.String()+".wav")
			if err := SaveWAV(path, w, enc); err != nil {
				t.Fatal(err)
			}
			got, err := LoadWAV(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Encoding != enc || got.Channels != 2 || got.Frames() != frames || got.SampleRate != 11025 {
				t.Fatalf("read %v, %d channels, %d frames at %d Hz", got.Encoding, got.Channels, got.Frames(), got.SampleRate)
			}
			// Integers round to their step; every sample is read on a
			// grid of 2⁻²⁴ (libsox's) and clipped to [−1, 1].
			step := map[Encoding]float64{PCMU8: 1.0 / 128, PCMS16: 1.0 / (1 << 15), PCMS24: 1.0 / (1 << 23)}[enc]
			top := 1 - step
			if step == 0 {
				step, top = 1.0/(1<<23), 1
			}
			for i, v := range got.Samples {
				want := min(max(float64(w.Samples[i]), -1), top)
				if d := math.Abs(float64(v) - want); d > step/2 {
					t.Fatalf("sample %d: wrote %g, read %g", i, w.Samples[i], v)
				}
			}
			if raw, _ := os.ReadFile(path); len(raw)%2 != 0 {
				t.Errorf("file of %d bytes: a RIFF chunk must be padded to an even size", len(raw))
			}
		})
	}
}

// TestWAVQuantize checks the rounding and clipping of WriteWAV, libsox's:
// halves up, NaN the most negative value.
func TestWAVQuantize(t *testing.T) {
	in := []float32{0.5 / 32768, -0.5 / 32768, 1.5 / 32768, -1.5 / 32768, 2, -2, float32(math.NaN()), float32(math.Inf(-1)), 32767.5 / 32768}
	want := []int16{1, 0, 2, -1, 32767, -32768, -32768, -32768, 32767}
	var b bytes.Buffer
	if err := WriteWAV(&b, Waveform{SampleRate: 8000, Channels: 1, Samples: in}, PCMS16); err != nil {
		t.Fatal(err)
	}
	got := make([]int16, len(in))
	binary.Read(bytes.NewReader(b.Bytes()[44:]), binary.LittleEndian, got)
	if !slices.Equal(got, want) {
		t.Errorf("quantised %v, want %v", got, want)
	}
}

// TestSaveWAVAtomic checks that a failed save leaves the old file.
func TestSaveWAVAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.wav")
	w := Waveform{SampleRate: 8000, Channels: 1, Samples: []float32{0, 0.5}}
	if err := SaveWAV(path, w, PCMS16); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	bad := Waveform{SampleRate: 8000, Channels: 2, Samples: []float32{0, 0.5, 1}}
	if err := SaveWAV(path, bad, PCMS16); err == nil {
		t.Fatal("saved 3 samples as stereo")
	}
	if err := SaveWAV(filepath.Join(dir, "missing", "b.wav"), w, PCMS16); err == nil {
		t.Fatal("saved into a missing directory")
	}
	now, _ := os.ReadFile(path)
	if !bytes.Equal(old, now) {
		t.Error("a failed save changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left in the directory, want 1", len(entries))
	}
}

// wavBytes builds a RIFF WAVE stream of the given chunks (id, body).
func wavBytes(form string, chunks ...string) []byte {
	var b bytes.Buffer
	for i := 0; i < len(chunks); i += 2 {
		b.WriteString(chunks[i])
		binary.Write(&b, binary.LittleEndian, uint32(len(chunks[i+1])))
		b.WriteString(chunks[i+1])
		if len(chunks[i+1])%2 == 1 {
			b.WriteByte(0)
		}
	}
	out := []byte("RIFF")
	out = binary.LittleEndian.AppendUint32(out, uint32(4+b.Len()))
	return append(append(out, form...), b.Bytes()...)
}

// fmtBody is a "fmt " chunk's body.
func fmtBody(tag, channels uint16, rate uint32, align, bits uint16, ext ...byte) string {
	var b []byte
	le := binary.LittleEndian
	b = le.AppendUint16(b, tag)
	b = le.AppendUint16(b, channels)
	b = le.AppendUint32(b, rate)
	b = le.AppendUint32(b, rate*uint32(align))
	b = le.AppendUint16(b, align)
	b = le.AppendUint16(b, bits)
	return string(append(b, ext...))
}

// TestWAVErrors checks that corrupt, truncated and unsupported files are
// errors that say so.
func TestWAVErrors(t *testing.T) {
	pcm := fmtBody(1, 2, 8000, 4, 16)
	good := wavBytes("WAVE", "fmt ", pcm, "data", "\x01\x00\x02\x00\x03\x00\x04\x00")
	if w, err := ReadWAV(bytes.NewReader(good)); err != nil || w.Frames() != 2 {
		t.Fatalf("the well-formed file: %v, %d frames", err, w.Frames())
	}
	extGUID := func(tag byte, guid string) string {
		return fmtBody(0xFFFE, 1, 8000, 2, 16, append([]byte{22, 0, 16, 0, 4, 0, 0, 0, tag, 0}, guid...)...)
	}
	cases := []struct {
		name string
		raw  []byte
		is   []error
		msg  string
	}{
		{"empty", nil, []error{ErrFormat, io.ErrUnexpectedEOF}, "RIFF header"},
		{"not RIFF", []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"), []error{ErrFormat}, "OggS"},
		{"not WAVE", wavBytes("AVI ", "fmt ", pcm), []error{ErrFormat}, "AVI"},
		{"RIFX", append([]byte("RIFX"), good[4:]...), []error{ErrUnsupported}, "big-endian"},
		{"RF64", append([]byte("RF64"), good[4:]...), []error{ErrUnsupported}, "RF64"},
		{"no fmt", wavBytes("WAVE", "LIST", "abcd"), []error{ErrFormat}, "no \"fmt \""},
		{"no data", wavBytes("WAVE", "fmt ", pcm), []error{ErrFormat}, "no \"data\""},
		{"data first", wavBytes("WAVE", "data", "\x00\x00", "fmt ", pcm), []error{ErrFormat}, "before"},
		{"two fmt", wavBytes("WAVE", "fmt ", pcm, "fmt ", pcm), []error{ErrFormat}, "two"},
		{"short fmt", wavBytes("WAVE", "fmt ", pcm[:14], "data", ""), []error{ErrFormat}, "under 16"},
		{"A-law", wavBytes("WAVE", "fmt ", fmtBody(6, 1, 8000, 1, 8), "data", "\x01"), []error{ErrUnsupported}, "A-law"},
		{"MP3", wavBytes("WAVE", "fmt ", fmtBody(0x55, 1, 8000, 1, 0), "data", "\x01"), []error{ErrUnsupported}, "compressed"},
		{"unknown tag", wavBytes("WAVE", "fmt ", fmtBody(0x1234, 1, 8000, 2, 16), "data", ""), []error{ErrUnsupported}, "0x1234"},
		{"extensible A-law", wavBytes("WAVE", "fmt ", extGUID(6, string(ksSubtype)), "data", ""), []error{ErrUnsupported}, "A-law"},
		{"extensible GUID", wavBytes("WAVE", "fmt ", extGUID(1, strings.Repeat("x", 14)), "data", ""), []error{ErrUnsupported}, "GUID"},
		{"extensible short", wavBytes("WAVE", "fmt ", fmtBody(0xFFFE, 1, 8000, 2, 16, 0, 0), "data", ""), []error{ErrFormat}, "under 40"},
		{"no channels", wavBytes("WAVE", "fmt ", fmtBody(1, 0, 8000, 2, 16), "data", ""), []error{ErrFormat}, "0 channels"},
		{"no rate", wavBytes("WAVE", "fmt ", fmtBody(1, 1, 0, 2, 16), "data", ""), []error{ErrFormat}, "0 Hz"},
		{"huge frames", wavBytes("WAVE", "fmt ", fmtBody(3, 12336, 8000, 0, 64), "data", ""), []error{ErrFormat}, "exceed a block align"},
		{"no bits", wavBytes("WAVE", "fmt ", fmtBody(1, 1, 8000, 2, 0), "data", ""), []error{ErrFormat}, "0-bit PCM"},
		{"float16", wavBytes("WAVE", "fmt ", fmtBody(3, 1, 8000, 2, 16), "data", ""), []error{ErrUnsupported}, "16-bit IEEE"},
		{"wide PCM", wavBytes("WAVE", "fmt ", fmtBody(1, 1, 8000, 8, 64), "data", ""), []error{ErrUnsupported}, "8-byte"},
		{"truncated fmt", good[:30], []error{ErrFormat, io.ErrUnexpectedEOF}, "\"fmt \""},
		{"truncated chunk header", good[:40], []error{ErrFormat, io.ErrUnexpectedEOF}, "chunk header"},
		{"truncated skipped chunk", wavBytes("WAVE", "fmt ", pcm, "LIST", "abcdef")[:48], []error{ErrFormat, io.ErrUnexpectedEOF}, "LIST"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := ReadWAV(bytes.NewReader(c.raw))
			if err == nil {
				t.Fatalf("read %+v", w)
			}
			for _, is := range c.is {
				if !errors.Is(err, is) {
					t.Errorf("%v: not %v", err, is)
				}
			}
			if !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "audio: ") {
				t.Errorf("%v: want a message with %q", err, c.msg)
			}
		})
	}
	if _, err := LoadWAV(filepath.Join(t.TempDir(), "missing.wav")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestWAVStreamingSize reads a data chunk whose size a streaming writer
// left at 0xFFFFFFFF: up to the end of the stream.
func TestWAVStreamingSize(t *testing.T) {
	raw := wavBytes("WAVE", "fmt ", fmtBody(1, 1, 8000, 2, 16), "data", "\x00\x40\x00\xc0")
	binary.LittleEndian.PutUint32(raw[len(raw)-8:], math.MaxUint32)
	w, err := ReadWAV(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.Samples, []float32{0.5, -0.5}) {
		t.Errorf("read %v", w.Samples)
	}
}

// TestWriteWAVErrors checks the arguments WriteWAV refuses.
func TestWriteWAVErrors(t *testing.T) {
	ok := Waveform{SampleRate: 8000, Channels: 1, Samples: []float32{0}}
	cases := []struct {
		name string
		w    Waveform
		enc  Encoding
		msg  string
	}{
		{"no encoding", ok, 0, "Encoding(0)"},
		{"no channels", Waveform{SampleRate: 8000}, PCMS16, "0 channels"},
		{"no rate", Waveform{Channels: 1}, PCMS16, "0 Hz"},
		{"partial frame", Waveform{SampleRate: 8000, Channels: 2, Samples: []float32{0}}, PCMS16, "whole number"},
	}
	for _, c := range cases {
		if err := WriteWAV(io.Discard, c.w, c.enc); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.msg)
		}
	}
	if err := WriteWAV(failWriter{}, ok, PCMS16); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing writer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// FuzzReadWAV checks that ReadWAV never panics, that what it reads is
// well formed (samples in [−1, 1]) and that it writes back stably.
func FuzzReadWAV(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.wav")
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		w, err := ReadWAV(bytes.NewReader(raw))
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrUnsupported", err)
			}
			return
		}
		if w.Channels < 1 || w.SampleRate < 1 || len(w.Samples) != w.Channels*w.Frames() || w.Encoding.Bytes() == 0 {
			t.Fatalf("read a malformed waveform: %d channels at %d Hz, %d samples, %v", w.Channels, w.SampleRate, len(w.Samples), w.Encoding)
		}
		for i, v := range w.Samples {
			if !(v >= -1 && v <= 1) {
				t.Fatalf("sample %d = %g outside [−1, 1]", i, v)
			}
		}
		var b bytes.Buffer
		if err := WriteWAV(&b, w, w.Encoding); err != nil {
			t.Fatal(err)
		}
		back, err := ReadWAV(&b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Samples, w.Samples) || back.Channels != w.Channels || back.SampleRate != w.SampleRate || back.Encoding != w.Encoding {
			t.Fatal("written and read back, the waveform changed")
		}
	})
}
