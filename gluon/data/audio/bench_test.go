package audio_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
)

// benchBlock runs b on a batch of 8 one-second clips at rate Hz and
// reports audio seconds processed per second.
func benchBlock(b *testing.B, blk gluon.Block, rate int) {
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, 8, rate)
	for b.Loop() {
		nd.WithScope(func() []*nd.NDArray {
			blk.Forward(x)
			return nil
		})
	}
	b.ReportMetric(8*float64(b.N)/b.Elapsed().Seconds(), "audio-s/s")
}

func BenchmarkMelSpectrogram(b *testing.B) {
	benchBlock(b, audio.NewMelSpectrogram(audio.MelSpectrogramOpts{
		Spectrogram: audio.SpectrogramOpts{NFFT: 400, HopLength: 160}, Mel: audio.MelOpts{NMels: 80}}), 16000)
}

func BenchmarkMFCC(b *testing.B) {
	benchBlock(b, audio.NewMFCC(audio.MFCCOpts{NMFCC: 13,
		Spectrogram: audio.SpectrogramOpts{NFFT: 400, HopLength: 160}, Mel: audio.MelOpts{NMels: 40}}), 16000)
}

func BenchmarkResample(b *testing.B) {
	benchBlock(b, audio.NewResample(44100, 16000, audio.ResampleOpts{}), 44100)
}
