package audio

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/internal/goldentest"
)

// saveCase is one case of testdata/saves.json: a float32 signal and the
// bytes torchaudio.save (libsox) wrote for it.
type saveCase struct {
	Name       string
	Channels   int
	SampleRate int `json:"sample_rate"`
	Encoding   string
	InputBits  []uint32 `json:"input_bits"`
	WAV        string
}

// TestWriteWAVLikeTorchaudio writes each signal of saves.json and compares
// the bytes with torchaudio.save's: the headers (libsox's speaker masks
// for 1 to 9 channels, pad bytes) and every sample (halves of a step
// rounded up, 32-bit PCM truncated, NaN the most negative value, floats
// clipped and put on libsox's grid).
func TestWriteWAVLikeTorchaudio(t *testing.T) {
	encs := map[string]Encoding{"PCM_U8": PCMU8, "PCM_S16": PCMS16, "PCM_S24": PCMS24, "PCM_S32": PCMS32, "PCM_F32": Float32, "PCM_F64": Float64}
	for i, c := range goldentest.Cases[saveCase](t, "testdata/saves.json") {
		t.Run(fmt.Sprintf("%d_%s_%s_%dch", i, c.Name, c.Encoding, c.Channels), func(t *testing.T) {
			want, err := hex.DecodeString(c.WAV)
			if err != nil {
				t.Fatal(err)
			}
			enc, ok := encs[c.Encoding]
			if !ok {
				t.Fatalf("unknown encoding %q", c.Encoding)
			}
			w := Waveform{SampleRate: c.SampleRate, Channels: c.Channels, Samples: make([]float32, len(c.InputBits))}
			for j, b := range c.InputBits {
				w.Samples[j] = math.Float32frombits(b)
			}
			var got bytes.Buffer
			if err := WriteWAV(&got, w, enc); err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(got.Bytes(), want) {
				return
			}
			g := got.Bytes()
			n := 0
			for n < min(len(g), len(want)) && g[n] == want[n] {
				n++
			}
			hdr := len(want) - len(w.Samples)*enc.Bytes() - len(w.Samples)*enc.Bytes()%2
			if n < hdr || len(g) != len(want) {
				t.Fatalf("%d bytes, torchaudio.save %d; they differ from byte %d (header of %d):\n go % x\ntor % x",
					len(g), len(want), n, hdr, g[:min(len(g), hdr+8)], want[:min(len(want), hdr+8)])
			}
			bad := 0
			for j := range w.Samples {
				// The samples are written frame by frame.
				at := hdr + j*enc.Bytes()
				gs, ws := g[at:at+enc.Bytes()], want[at:at+enc.Bytes()]
				if !bytes.Equal(gs, ws) {
					if bad++; bad <= 5 {
						frames := len(w.Samples) / c.Channels
						ch, fr := j%c.Channels, j/c.Channels
						t.Errorf("sample %d (channel %d, frame %d) = %.10g: % x, torchaudio.save % x",
							j, ch, fr, w.Samples[ch*frames+fr], gs, ws)
					}
				}
			}
			t.Errorf("%d of %d samples differ", bad, len(w.Samples))
		})
	}
}
