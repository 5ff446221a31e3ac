package audio_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestTransformONNX exports the added Blocks that have ONNX forms (LFCC,
// Vol and MuLawDecoding), with the signal's length free, loads each
// file back and compares with the Block's output in float32, at the
// example's size and at a longer signal.
func TestTransformONNX(t *testing.T) {
	dev := ctx.CPU(0)
	cases := []struct {
		name  string
		net   gluon.Block
		shape []int
		free  []int
		scale float64 // the random input's scale
		ops   []string
	}{
		{"lfcc", audio.NewLFCC(audio.LFCCOpts{NLFCC: 6, Spectrogram: audio.SpectrogramOpts{NFFT: 32, HopLength: 8},
			Filter: audio.LinearOpts{NFilter: 12, SampleRate: 8000}}), []int{2, 120}, []int{1}, 1, []string{"STFT", "MatMul"}},
		{"lfcc-loglf", audio.NewLFCC(audio.LFCCOpts{NLFCC: 5, LogLF: true, Norm: audio.DCTNone,
			Spectrogram: audio.SpectrogramOpts{NFFT: 24, HopLength: 6, Power: 1}, Filter: audio.LinearOpts{NFilter: 8, SampleRate: 4000, FMin: 100}}),
			[]int{1, 2, 90}, []int{2}, 1, []string{"STFT", "Log"}},
		{"vol", audio.NewVol(6, audio.GainDB), []int{2, 40}, []int{1}, 0.8, []string{"Mul", "Clip"}},
		{"vol-unscaled", audio.NewVol(1, audio.GainPower), []int{2, 40}, []int{1}, 1.5, []string{"Clip"}},
		{"mulaw-decoding", audio.NewMuLawDecoding(1024), []int{2, 40}, []int{1}, 500, []string{"Sign", "Exp"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := onnx.ExportOpts{FreeAxes: c.free}
			mp, err := onnx.Export(c.net, c.shape, opts)
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, n := range mp.GetGraph().GetNode() {
				ops = append(ops, n.GetOpType())
			}
			for _, op := range c.ops {
				if !slices.Contains(ops, op) {
					t.Errorf("no %s node: %v", op, ops)
				}
			}
			longer := slices.Clone(c.shape)
			for _, a := range c.free {
				longer[a] += 5
			}
			in := func(seed uint64, shape []int) *nd.NDArray {
				nd.Seed(seed)
				x := nd.RandomUniform(dev, nd.Float32, -1, 1, shape...)
				if c.name == "mulaw-decoding" { // codes in [0, 1000]
					return nd.AddScalar(nd.MulScalar(x, c.scale), c.scale)
				}
				return nd.MulScalar(x, c.scale)
			}
			onnxtest.RoundTrip(t, "audio-"+c.name, c.net, c.shape, opts, in(1, c.shape), in(2, longer))
		})
	}
}
