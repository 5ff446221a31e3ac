package audio_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestArgumentErrors checks that invalid arguments panic with an
// *nd.Error naming the function and the problem.
func TestArgumentErrors(t *testing.T) {
	dev := ctx.CPU(0)
	sig := ndtest.Rand(dev, 1, -1, 1, 2, 50)
	spec := ndtest.Rand(dev, 2, 0, 1, 2, 9, 4)
	cases := []struct {
		name, op, msg string
		f             func()
	}{
		{"window longer than NFFT", "audio.NewSpectrogram", "window length 20", func() { audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 16, WinLength: 20}) }},
		{"negative power", "audio.NewSpectrogram", "power -1", func() { audio.NewSpectrogram(audio.SpectrogramOpts{Power: -1}) }},
		{"normalized", "audio.NewSpectrogram", "normalized \"yes\"", func() { audio.NewSpectrogram(audio.SpectrogramOpts{Normalized: "yes"}) }},
		{"pad mode", "audio.NewSpectrogram", "pad mode \"wrap\"", func() { audio.NewSpectrogram(audio.SpectrogramOpts{PadMode: "wrap"}) }},
		{"negative pad", "audio.NewSpectrogram", "negative padding", func() { audio.NewSpectrogram(audio.SpectrogramOpts{Pad: -1}) }},
		{"window function", "audio.NewSpectrogram", "made shape [3]", func() {
			audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 8, Window: func(dev ctx.Context, dt nd.DType, _ int) *nd.NDArray {
				return audio.HannWindow(dev, dt, 3, true)
			}})
		}},
		{"integer signal", "audio.Spectrogram", "floating-point", func() {
			audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 8}).Forward(nd.FromSlice(dev, []int32{1, 2, 3}))
		}},
		{"short signal", "fft.STFT", "reflect padding", func() { audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 128}).Forward(sig) }},
		{"mel scale", "audio.NewMelScale", "mel scale \"mel\"", func() { audio.NewMelScale(9, audio.MelOpts{MelScale: "mel"}) }},
		{"mel bounds", "audio.NewMelScale", "FMin 500, FMax 400", func() { audio.NewMelScale(9, audio.MelOpts{FMin: 500, FMax: 400}) }},
		{"mel norm", "audio.MelFilterBank", "norm \"area\"", func() { audio.MelFilterBank(dev, nd.Float32, 9, audio.MelOpts{Norm: "area"}) }},
		{"mel bins", "audio.MelScale", "9 frequency bins", func() { audio.NewMelScale(10, audio.MelOpts{NMels: 4}).Forward(spec) }},
		{"complex mel", "audio.NewMelSpectrogram", "Complex", func() {
			audio.NewMelSpectrogram(audio.MelSpectrogramOpts{Spectrogram: audio.SpectrogramOpts{Complex: true}})
		}},
		{"stype", "audio.NewAmplitudeToDB", "stype \"energy\"", func() { audio.NewAmplitudeToDB(audio.DBOpts{SType: "energy"}) }},
		{"top dB", "audio.NewAmplitudeToDB", "top dB -1", func() { audio.NewAmplitudeToDB(audio.DBOpts{TopDB: -1}) }},
		{"top dB of a vector", "audio.AmplitudeToDB", "at least 2 axes", func() {
			audio.NewAmplitudeToDB(audio.DBOpts{TopDB: 80}).Forward(nd.FromSlice(dev, []float32{1, 2}))
		}},
		{"too many MFCCs", "audio.NewMFCC", "20 coefficients of 10", func() { audio.NewMFCC(audio.MFCCOpts{NMFCC: 20, Mel: audio.MelOpts{NMels: 10}}) }},
		{"DCT type", "audio.NewMFCC", "DCT type 3", func() { audio.NewMFCC(audio.MFCCOpts{DCTType: 3}) }},
		{"DCT norm", "audio.DCTMatrix", "DCT norm \"l2\"", func() { audio.DCTMatrix(dev, nd.Float32, 4, 8, "l2") }},
		{"resample rate", "audio.NewResample", "both must be positive", func() { audio.NewResample(0, 16000, audio.ResampleOpts{}) }},
		{"resample method", "audio.NewResample", "method \"linear\"", func() { audio.NewResample(2, 3, audio.ResampleOpts{Method: "linear"}) }},
		{"rolloff", "audio.NewResample", "rolloff -0.5", func() { audio.NewResample(2, 3, audio.ResampleOpts{Rolloff: -0.5}) }},
		{"rolloff inf", "audio.NewResample", "rolloff +Inf", func() { audio.NewResample(2, 3, audio.ResampleOpts{Rolloff: math.Inf(1)}) }},
		{"zero beta", "audio.NewResample", "beta 8 with ZeroBeta", func() {
			audio.NewResample(2, 3, audio.ResampleOpts{Method: audio.SincKaiser, Beta: 8, ZeroBeta: true})
		}},
		{"resample size", "audio.NewResample", "too large", func() { audio.NewResample(44101, 48000, audio.ResampleOpts{}) }},
		{"resample scalar", "audio.Resample", "at least 1 axes", func() {
			audio.NewResample(2, 3, audio.ResampleOpts{}).Forward(nd.Full(dev, nd.Float32, 1))
		}},
		{"window length", "audio.HannWindow", "negative window length", func() { audio.HannWindow(dev, nd.Float32, -1, true) }},
		{"window dtype", "audio.HammingWindow", "floating-point dtype", func() { audio.HammingWindow(dev, nd.Int32, 4, true) }},
		{"kaiser beta", "audio.KaiserWindow", "beta -1", func() { audio.KaiserWindow(dev, nd.Float32, 4, true, -1) }},
		{"mask width", "audio.NewTimeMasking", "negative maximum width", func() { audio.NewTimeMasking(-1, audio.MaskOpts{}) }},
		{"mask p", "audio.NewFrequencyMasking", "proportion p 2", func() { audio.NewFrequencyMasking(3, audio.MaskOpts{P: 2}) }},
		{"mask zero p", "audio.NewTimeMasking", "p 0.5 with ZeroP", func() { audio.NewTimeMasking(3, audio.MaskOpts{P: 0.5, ZeroP: true}) }},
		{"mask rng", "audio.Masking.Apply", "nil random generator", func() { audio.NewTimeMasking(3, audio.MaskOpts{}).Apply(spec, nil) }},
		{"mask rank", "audio.Masking", "at least 2 axes", func() { audio.NewTimeMasking(3, audio.MaskOpts{}).Forward(nd.FromSlice(dev, []float32{1})) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.f)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *nd.Error", err)
			}
			if e.Op != c.op || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("got %v, want op %s and a message with %q", err, c.op, c.msg)
			}
		})
	}
}

// TestDefaults checks torchaudio's defaults: n_fft 400, hop 200, 201
// bins, 128 mels at 16 kHz, 40 MFCCs, a 6-zero filter at 0.99.
func TestDefaults(t *testing.T) {
	s := audio.NewSpectrogram(audio.SpectrogramOpts{})
	if o := s.Opts(); o.NFFT != 400 || o.WinLength != 400 || o.HopLength != 200 || o.Power != 2 || s.Bins() != 201 {
		t.Errorf("spectrogram defaults %+v, %d bins", o, s.Bins())
	}
	m := audio.NewMFCC(audio.MFCCOpts{})
	if o := m.Opts(); o.NMFCC != 40 || o.Mel.NMels != 128 || o.Mel.SampleRate != 16000 || o.Mel.FMax != 8000 || o.Norm != audio.DCTOrtho || o.Mel.MelScale != audio.HTK {
		t.Errorf("MFCC defaults %+v", o)
	}
	if o := audio.NewResample(3, 2, audio.ResampleOpts{Method: "kaiser_window"}).Opts(); o.LowpassFilterWidth != 6 || o.Rolloff != 0.99 || o.Method != audio.SincKaiser || o.Beta != 14.769656459379492 {
		t.Errorf("resample defaults %+v", o)
	}
	if o := audio.NewAmplitudeToDB(audio.DBOpts{}).Opts(); o.SType != audio.Power || o.TopDB != 0 {
		t.Errorf("AmplitudeToDB defaults %+v", o)
	}
	x := ndtest.Rand(ctx.CPU(0), 3, -1, 1, 1600)
	if got := m.Forward(x).Shape(); !slices.Equal(got, []int{40, 9}) {
		t.Errorf("MFCC of 1600 samples: shape %v, want [40 9]", got)
	}
	if got := m.Meta().Children(); len(got) != 2 || got[0].Meta().Name() != "melspectrogram0" || got[1].Meta().Name() != "amplitudetodb0" {
		t.Errorf("MFCC children %v", got)
	}
	if n := gluon.CollectParams(m).Len(); n != 0 {
		t.Errorf("MFCC has %d parameters, want none", n)
	}
}

// TestContexts runs the Blocks on cpu(1) and in float32 and float64: the
// output stays on the input's context and dtype, with cpu(0)'s values,
// and the cached constants outlive the scopes they were first used in.
func TestContexts(t *testing.T) {
	blocks := map[string]gluon.Block{
		"mfcc":     audio.NewMFCC(audio.MFCCOpts{NMFCC: 6, Spectrogram: audio.SpectrogramOpts{NFFT: 64}, Mel: audio.MelOpts{NMels: 12}}),
		"resample": audio.NewResample(16000, 11025, audio.ResampleOpts{}),
		"complex":  audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 32, Complex: true}),
	}
	for name, b := range blocks {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			x0 := ndtest.Rand(ctx.CPU(0), 4, -1, 1, 2, 300).AsType(dt)
			var want []float64
			for range 2 {
				nd.WithScope(func() []*nd.NDArray {
					want = b.Forward(x0).Float64s()
					return nil
				})
			}
			x1 := x0.CopyTo(ctx.CPU(1))
			y := b.Forward(x1)
			if y.Context() != ctx.CPU(1) || y.DType() != dt {
				t.Errorf("%s: output on %v in %v, input on cpu(1) in %v", name, y.Context(), y.DType(), dt)
			}
			if got := y.Float64s(); !slices.Equal(got, want) {
				t.Errorf("%s %v: cpu(1) differs from cpu(0)", name, dt)
			}
		}
	}
}

// TestResampleShapes checks lengths, leading axes, empty inputs and the
// identity.
func TestResampleShapes(t *testing.T) {
	dev := ctx.CPU(0)
	r := audio.NewResample(44100, 16000, audio.ResampleOpts{})
	for _, n := range []int{1, 440, 441, 442, 1000} {
		if got, want := r.OutputLength(n), int(math.Ceil(float64(n)*160/441)); got != want {
			t.Errorf("OutputLength(%d) = %d, want %d", n, got, want)
		}
	}
	if got := r.Forward(ndtest.Rand(dev, 1, -1, 1, 2, 3, 500)).Shape(); !slices.Equal(got, []int{2, 3, 182}) {
		t.Errorf("shape %v, want [2 3 182]", got)
	}
	if got := r.Forward(nd.Zeros(dev, nd.Float32, 0, 100)).Shape(); !slices.Equal(got, []int{0, 37}) {
		t.Errorf("empty batch: shape %v, want [0 37]", got)
	}
	x := ndtest.Rand(dev, 2, -1, 1, 10)
	if y := audio.NewResample(8000, 8000, audio.ResampleOpts{}).Forward(x); y != x {
		t.Error("resampling to the same rate should return the input")
	}
	// A tone well below both Nyquist rates comes through 8 kHz → 12 kHz
	// unchanged away from the edges.
	const n = 800
	tone := make([]float64, n)
	for i := range tone {
		tone[i] = math.Sin(2 * math.Pi * 440 * float64(i) / 8000)
	}
	y := audio.NewResample(8000, 12000, audio.ResampleOpts{}).Forward(nd.FromSlice(dev, tone)).Float64s()
	for i := 100; i < len(y)-100; i++ {
		if want := math.Sin(2 * math.Pi * 440 * float64(i) / 12000); math.Abs(y[i]-want) > 2e-3 {
			t.Fatalf("sample %d = %g, want %g", i, y[i], want)
		}
	}
}

// maskedBands returns, for each spectrogram [F, T] of y, the positions
// along axis (−2 or −1) where y differs from x, and fails t unless
// each such position is wholly set to value.
func maskedBands(t *testing.T, x, y *nd.NDArray, axis int, value float64) [][]int {
	s := x.Shape()
	f, tt := s[len(s)-2], s[len(s)-1]
	xv, yv := x.Float64s(), y.Float64s()
	var bands [][]int
	for b := 0; b < len(xv)/(f*tt); b++ {
		var band []int
		n, other := f, tt
		if axis == -1 {
			n, other = tt, f
		}
		for i := range n {
			hit := 0
			for j := range other {
				k := b*f*tt + i*tt + j
				if axis == -1 {
					k = b*f*tt + j*tt + i
				}
				if yv[k] != xv[k] {
					if yv[k] != value {
						t.Fatalf("element %d = %g, want the mask value %g", k, yv[k], value)
					}
					hit++
				}
			}
			if hit == other {
				band = append(band, i)
			} else if hit != 0 {
				t.Fatalf("position %d partly masked", i)
			}
		}
		bands = append(bands, band)
	}
	return bands
}

// TestMasking checks the masks' shapes, the modes and the seeding.
func TestMasking(t *testing.T) {
	dev := ctx.CPU(0)
	x := ndtest.Rand(dev, 5, 1, 2, 4, 3, 12, 20) // no value equals the mask value 0
	tm := audio.NewTimeMasking(8, audio.MaskOpts{})
	if y := tm.Forward(x); y != x {
		t.Error("predict mode should pass the input through")
	}
	var a, b, c *nd.NDArray
	autograd.TrainMode(func() {
		nd.Seed(7)
		a = tm.Forward(x)
		nd.Seed(7)
		b = tm.Forward(x)
		c = tm.Forward(x)
	})
	if !slices.Equal(a.Float64s(), b.Float64s()) {
		t.Error("the same seed gave different masks")
	}
	for _, y := range []*nd.NDArray{a, c} {
		bands := maskedBands(t, x, y, -1, 0)
		for _, band := range bands {
			if !slices.Equal(band, bands[0]) {
				t.Fatalf("shared mask differs between examples: %v", bands)
			}
			if len(band) >= 8 || (len(band) > 0 && band[len(band)-1]-band[0] != len(band)-1) {
				t.Fatalf("band %v: want fewer than 8 consecutive frames", band)
			}
		}
	}
	// IID masks differ between examples and channels (with these draws),
	// and Apply draws from the generator it is given.
	fm := audio.NewFrequencyMasking(10, audio.MaskOpts{IID: true, Value: -3})
	y1 := fm.Apply(x, rand.New(rand.NewPCG(1, 2)))
	y2 := fm.Apply(x, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(y1.Float64s(), y2.Float64s()) {
		t.Error("the same generator state gave different masks")
	}
	bands := maskedBands(t, x, y1, -2, -3)
	distinct := map[string]bool{}
	for _, band := range bands {
		if len(band) >= 10 {
			t.Fatalf("band %v: want fewer than 10 bins", band)
		}
		distinct[fmtInts(band)] = true
	}
	if len(distinct) < 3 {
		t.Errorf("12 iid masks with only %d distinct bands: %v", len(distinct), bands)
	}
	// P caps the width: 20 frames at p = 0.1 allow masks of at most 1.
	capped := audio.NewTimeMasking(15, audio.MaskOpts{P: 0.1})
	for seed := range uint64(20) {
		for _, band := range maskedBands(t, x, capped.Apply(x, rand.New(rand.NewPCG(seed, 0))), -1, 0) {
			if len(band) > 1 {
				t.Fatalf("band %v wider than p·T = 2 allows", band)
			}
		}
	}
	if y := audio.NewTimeMasking(1, audio.MaskOpts{}).Apply(x, rand.New(rand.NewPCG(0, 0))); !slices.Equal(y.Float64s(), x.Float64s()) {
		t.Error("a maximum width of 1 masks nothing")
	}
}

// fmtInts formats a band for map keys.
func fmtInts(v []int) string {
	var b strings.Builder
	for _, x := range v {
		b.WriteString(string(rune('a' + x)))
	}
	return b.String()
}

// TestTransform runs Blocks in a data pipeline.
func TestTransform(t *testing.T) {
	samples := make(data.SimpleDataset, 3)
	for i := range samples {
		v := make([]float32, 2*400)
		for k := range v {
			v[k] = float32(math.Sin(float64(k*(i+1)) * 0.05))
		}
		samples[i] = data.Sample{Data: data.Tensor{Shape: []int{2, 400}, F32: v}, Label: float32(i)}
	}
	mel := audio.NewMelSpectrogram(audio.MelSpectrogramOpts{Spectrogram: audio.SpectrogramOpts{NFFT: 64, HopLength: 32},
		Mel: audio.MelOpts{NMels: 16, SampleRate: 8000}})
	pipe := data.Compose(audio.Transform(mel), audio.Transform(audio.NewTimeMasking(5, audio.MaskOpts{})))
	ds := data.TransformFirst(samples, pipe)
	s1, err := ds.Get(1, data.SampleRNG(3, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := ds.Get(1, data.SampleRNG(3, 0, 1))
	if !slices.Equal(s1.Data.Shape, []int{2, 16, 13}) || s1.Label != 1 {
		t.Fatalf("sample of shape %v, label %g", s1.Data.Shape, s1.Label)
	}
	if !slices.Equal(s1.Data.F32, s2.Data.F32) {
		t.Error("the same sample generator gave different masks")
	}
	want := mel.Forward(nd.FromSlice(ctx.CPU(0), samples[1].Data.F32, 2, 400)).Float32s()
	diff := 0
	for i, v := range s1.Data.F32 {
		if v != want[i] {
			if v != 0 {
				t.Fatalf("value %d = %g, want %g or the mask value 0", i, v, want[i])
			}
			diff++
		}
	}
	t.Logf("%d of %d values masked", diff, len(want))

	if _, err := audio.Transform(mel)(data.Tensor{Shape: []int{2}, U8: []uint8{1, 2}}, nil); err == nil || !strings.Contains(err.Error(), "uint8") {
		t.Errorf("uint8 sample: %v", err)
	}
	if _, err := audio.Transform(mel)(data.Tensor{Shape: []int{3}, F32: []float32{1, 2, 3}}, nil); err == nil || !strings.Contains(err.Error(), "reflect padding") {
		t.Errorf("short sample: %v", err)
	}
	if _, err := audio.Transform(audio.NewTimeMasking(3, audio.MaskOpts{}))(data.Tensor{Shape: []int{2, 2}, F32: make([]float32, 4)}, nil); err == nil {
		t.Error("masking with a nil generator")
	}
	if _, err := audio.Transform(mel)(data.Tensor{Shape: []int{3}, F32: []float32{1}}, nil); err == nil {
		t.Error("invalid tensor")
	}
}

// TestLoaderWorkers runs a feature pipeline in a DataLoader's workers
// (concurrently, under -race in make test): the batches hold the same
// features as the Block computes directly.
func TestLoaderWorkers(t *testing.T) {
	const n = 6
	samples := make(data.SimpleDataset, n)
	for i := range samples {
		samples[i] = data.Sample{Data: data.Tensor{Shape: []int{1, 800}, F32: tone(float64(200+100*i), 8000, 800)}}
	}
	mfcc := audio.NewMFCC(audio.MFCCOpts{NMFCC: 8, Spectrogram: audio.SpectrogramOpts{NFFT: 128, HopLength: 64},
		Mel: audio.MelOpts{SampleRate: 8000, NMels: 20}})
	loader, err := data.NewDataLoader(data.TransformFirst(samples, audio.Transform(mfcc)), data.LoaderOpts{BatchSize: 2, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	it := loader.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		got := b.Data.Float32s()
		per := len(got) / len(b.Indices)
		for k, i := range b.Indices {
			want := mfcc.Forward(nd.FromSlice(ctx.CPU(0), samples[i].Data.F32, 1, 800)).Float32s()
			if !slices.Equal(got[k*per:(k+1)*per], want) {
				t.Fatalf("sample %d: the loader's features differ from the Block's", i)
			}
		}
		b.Release()
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestHybridize checks the Blocks under gluon.Hybridize: MelScale,
// AmplitudeToDB and Resample are traced and replayed (their constants
// made inside the first trace), the spectrogram Blocks and the masking
// run eagerly; all give the eager values.
func TestHybridize(t *testing.T) {
	dev := ctx.CPU(0)
	cases := []struct {
		name   string
		b      gluon.Block
		shape  []int
		traced bool
	}{
		{"MelScale", audio.NewMelScale(33, audio.MelOpts{NMels: 12}), []int{2, 33, 10}, true},
		{"AmplitudeToDB", audio.NewAmplitudeToDB(audio.DBOpts{TopDB: 10}), []int{2, 33, 10}, true},
		{"Resample", audio.NewResample(3, 2, audio.ResampleOpts{}), []int{2, 300}, true},
		{"MFCC", audio.NewMFCC(audio.MFCCOpts{NMFCC: 6, Spectrogram: audio.SpectrogramOpts{NFFT: 64}, Mel: audio.MelOpts{NMels: 12}}), []int{2, 300}, false},
		{"TimeMasking", audio.NewTimeMasking(4, audio.MaskOpts{}), []int{2, 33, 10}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := gluon.Hybridize(c.b, gluon.HybridOpts{})
			for i := range 3 {
				x := ndtest.Rand(dev, uint64(i), 0.01, 1, c.shape...)
				var got, want []float64
				autograd.TrainMode(func() {
					nd.Seed(5)
					got = h.Forward(x).Float64s()
					nd.Seed(5)
					want = c.b.Forward(x).Float64s()
				})
				if !slices.Equal(got, want) {
					t.Fatalf("call %d: hybridized values differ from eager ones", i)
				}
			}
			if s := h.Stats(); c.traced != (s.Traces == 1 && s.Replays == 2) || !c.traced && s.Eager != 3 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}
