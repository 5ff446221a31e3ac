package audio_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
)

// tone returns n samples of a sine of freq Hz at rate Hz.
func tone(freq float64, rate, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(0.5 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return v
}

// A waveform written as 16-bit PCM and read back, as torchaudio.save and
// torchaudio.load would.
func ExampleReadWAV() {
	w := audio.Waveform{SampleRate: 8000, Channels: 2, Samples: []float32{0, 0.5, -0.25, 1, -1, 0.125}}
	var file bytes.Buffer
	if err := audio.WriteWAV(&file, w, audio.PCMS16); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(file.Len(), "bytes")
	back, err := audio.ReadWAV(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Encoding, back.SampleRate, "Hz,", back.Channels, "channels of", back.Frames(), "frames")
	fmt.Println(back.Channel(0), back.Channel(1))
	// Output:
	// 56 bytes
	// PCM_S16 8000 Hz, 2 channels of 3 frames
	// [0 0.5 -0.25] [0.9999695 -1 0.125]
}

// A mel spectrogram of a 1 kHz tone: its energy is in the mel band whose
// centre is nearest 1 kHz (torchaudio finds the same band).
func ExampleMelSpectrogram() {
	x := nd.FromSlice(ctx.CPU(0), tone(1000, 16000, 16000), 1, 16000)
	mel := audio.NewMelSpectrogram(audio.MelSpectrogramOpts{
		Spectrogram: audio.SpectrogramOpts{NFFT: 400, HopLength: 160},
		Mel:         audio.MelOpts{SampleRate: 16000, NMels: 40},
	})
	y := mel.Forward(x) // [1, 40, 101]
	fmt.Println(y.Shape())
	band := nd.ArgMax(nd.Mean(y, 2), 1).Ints()[0]
	centre := audio.MelToHz(audio.HzToMel(8000, audio.HTK)*float64(band+1)/41, audio.HTK)
	fmt.Printf("loudest band %d, centred at %.0f Hz\n", band, centre)
	// Output:
	// [1 40 101]
	// loudest band 13, centred at 955 Hz
}

// MFCCs of a batch of two stereo clips, torchaudio's MFCC with 13
// coefficients.
func ExampleMFCC() {
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, 2, 2, 4000)
	mfcc := audio.NewMFCC(audio.MFCCOpts{NMFCC: 13,
		Spectrogram: audio.SpectrogramOpts{NFFT: 400, HopLength: 160}, Mel: audio.MelOpts{NMels: 40}})
	fmt.Println(mfcc.Forward(x).Shape())
	// Output:
	// [2 2 13 26]
}

// Resampling from 44.1 kHz to 16 kHz: 441 input samples give 160.
func ExampleResample() {
	r := audio.NewResample(44100, 16000, audio.ResampleOpts{})
	x := nd.FromSlice(ctx.CPU(0), tone(440, 44100, 4410), 1, 4410)
	y := r.Forward(x)
	fmt.Println(x.Shape(), "→", y.Shape())
	// Output:
	// [1 4410] → [1 1600]
}

// torch's windows: periodic by default, symmetric on request.
func ExampleHannWindow() {
	dev := ctx.CPU(0)
	fmt.Printf("%.3f\n", audio.HannWindow(dev, nd.Float64, 4, true).Float64s())
	fmt.Printf("%.3f\n", audio.HannWindow(dev, nd.Float64, 5, false).Float64s())
	fmt.Printf("%.3f\n", audio.KaiserWindow(dev, nd.Float64, 5, false, 12).Float64s())
	// Output:
	// [0.000 0.500 1.000 0.500]
	// [0.000 0.500 1.000 0.500 0.000]
	// [0.000 0.216 1.000 0.216 0.000]
}

// The mel scales: HTK's reaches about 1000 mels at 1 kHz, Slaney's 15.
func ExampleHzToMel() {
	fmt.Printf("%.2f %.2f\n", audio.HzToMel(1000, audio.HTK), audio.HzToMel(1000, audio.Slaney))
	fmt.Printf("%.1f\n", audio.MelToHz(audio.HzToMel(3000, audio.Slaney), audio.Slaney))
	// Output:
	// 999.99 15.00
	// 3000.0
}

// A filter bank of three mel bands over the 9 bins of a 16-point
// spectrum at 8 kHz (torchaudio's melscale_fbanks(9, 0, 4000, 3, 8000)).
func ExampleMelFilterBank() {
	fb := audio.MelFilterBank(ctx.CPU(0), nd.Float64, 9, audio.MelOpts{NMels: 3, SampleRate: 8000})
	v := fb.Float64s()
	for f := range 9 {
		fmt.Printf("%4d Hz: %.2f %.2f %.2f\n", f*500, v[3*f], v[3*f+1], v[3*f+2])
	}
	// Output:
	//    0 Hz: 0.00 0.00 0.00
	//  500 Hz: 0.89 0.11 0.00
	// 1000 Hz: 0.17 0.83 0.00
	// 1500 Hz: 0.00 0.65 0.35
	// 2000 Hz: 0.00 0.20 0.80
	// 2500 Hz: 0.00 0.00 0.84
	// 3000 Hz: 0.00 0.00 0.56
	// 3500 Hz: 0.00 0.00 0.28
	// 4000 Hz: 0.00 0.00 0.00
}

// Features in a data pipeline: each stereo clip becomes a mel
// spectrogram with a random band of frames masked, drawn from the
// sample's generator.
func ExampleTransform() {
	clip := data.Tensor{Shape: []int{2, 8000}, F32: append(tone(300, 8000, 8000), tone(600, 8000, 8000)...)}
	ds := data.TransformFirst(data.SimpleDataset{{Data: clip}}, data.Compose(
		audio.Transform(audio.NewMelSpectrogram(audio.MelSpectrogramOpts{
			Spectrogram: audio.SpectrogramOpts{NFFT: 256, HopLength: 128},
			Mel:         audio.MelOpts{SampleRate: 8000, NMels: 32},
		})),
		audio.Transform(audio.NewTimeMasking(10, audio.MaskOpts{})),
	))
	s, err := ds.Get(0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Data.Shape)
	// Output:
	// [2 32 63]
}
