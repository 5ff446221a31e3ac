// Package audio is torchaudio's I/O and feature extraction for Goluon:
// WAV files read and written (ReadWAV, LoadWAV, WriteWAV, SaveWAV, as
// torchaudio.load with normalize=True and torchaudio.save), the window
// functions of torch (HannWindow, HammingWindow, BlackmanWindow,
// BartlettWindow, KaiserWindow), mel and linear filter banks and DCT
// matrices (MelFilterBank, LinearFilterBank, DCTMatrix, HzToMel,
// MelToHz), torchaudio's functions MuLawEncode, MuLawDecode and
// PhaseVocoder, and torchaudio's transforms as Blocks:
//
//   - spectrograms and their features: Spectrogram, MelScale,
//     MelSpectrogram, AmplitudeToDB, MFCC, LFCC;
//   - inverses: GriffinLim (waveforms from magnitudes) and
//     InverseMelScale (linear spectrograms from mel ones);
//   - signal transforms: Resample, MuLawEncoding, MuLawDecoding, Vol,
//     Fade;
//   - augmentation: TimeStretch, and SpecAugment's FrequencyMasking and
//     TimeMasking (NewFrequencyMasking, NewTimeMasking);
//   - FFT, nd/fft's transforms as a Block.
//
// Transform turns any of the Blocks into a data.Transform for data
// pipelines. Of torchaudio 0.13's transforms, InverseSpectrogram,
// ComputeDeltas, Vad, SlidingWindowCmn, SpectralCentroid, Loudness,
// PitchShift, the beamforming ones and RNNTLoss are not here.
//
// It lives beside gluon/data/vision because audio is, like images, a
// kind of data set: files are decoded into data.Tensors, and features are
// computed either in the data pipeline (Transform) or inside a network
// (the Blocks, which are differentiable and have no parameters).
//
// # Layout
//
// A waveform is [..., L]: any leading axes (channels, a batch), L
// samples; torchaudio.load's [channels, frames] is the common case. A
// spectrogram is [..., F, T] (frequency bins, frames), and a complex one
// [..., F, T, 2] (real and imaginary parts in a trailing axis, the layout
// of nd/fft and of torch.view_as_real).
//
// # Compared with torchaudio
//
// The transforms follow torchaudio 0.13.1 (the one Debian bookworm
// packages, with torch 1.13): same defaults, same formulas, the same
// gradients. Options are structs whose zero values mean torchaudio's
// defaults; a few of torchaudio's None values become flags (Complex for
// power=None, 0 for top_db=None). Windows, filter banks, DCT matrices
// and resampling filters are computed on the host in float64 and kept
// per context and dtype, as torchaudio's Resample does with dtype
// float64 (torchaudio's other transforms compute them in float32 by
// default). testdata/make_goldens.py makes the goldens: in float64 the
// outputs and gradients match torchaudio's within 1e-10 relative to
// 1 + |value| (measured: 2e-12 at worst), and in float32 the outputs
// are within float32 rounding of them (3e-5 for MFCC, 2e-6 for the
// rest).
//
// The spectrograms go through nd/fft's STFT, which transforms on the
// host in float64 whatever the context; the rest is nd's ops (MatMul,
// Conv1D for Resample), so a Block runs on any context its input is on.
// Under gluon.Hybridize, MelScale, AmplitudeToDB, Resample, the mu-law
// Blocks, Vol, Fade and TimeStretch are traced; Spectrogram,
// MelSpectrogram, MFCC, LFCC, GriffinLim, InverseMelScale, FFT and the
// masking are EagerOnly (host transforms, host draws), so a network
// holding one runs eagerly.
//
// The transforms added after the first set (LFCC, GriffinLim,
// InverseMelScale, the mu-law ones, TimeStretch, Vol, Fade;
// testdata/make_goldens_transforms.py) match torchaudio in float64
// within 10⁻¹⁰ relative to 1 + |value|, gradients included where
// torchaudio's are defined (measured: 2·10⁻¹¹ at worst, GriffinLim's 32
// iterations), and mu-law codes exactly. Where they differ:
//
//   - GriffinLim and InverseMelScale start from random values as
//     torchaudio's do, but drawn from Goluon's generators (the input's
//     session generator in Forward, a given one in Apply), so only their
//     distributions match torch.rand's; given torchaudio's starting point
//     (rand_init=False, or InverseMelScale's recorded torch.rand) they
//     reproduce its results.
//   - InverseMelScale runs torchaudio's SGD on the host in float64
//     whatever the input's dtype (torchaudio runs it in the input's
//     dtype; in float32 its steps, and where it stops, differ).
//   - TimeStretch's time steps k·rate are torch.arange's as its AVX2 CPU
//     kernel rounds them, so that a step within a rounding of a whole
//     frame picks the frames torchaudio's picks. In float32 such a step
//     may pick other frames than in float64, in torchaudio too.
//   - Values torchaudio takes but fails on later, or treats oddly, are
//     errors when the Block is made or called: a GriffinLim Length that
//     changes the number of frames, a power gain of 0 for Vol, a Fade
//     shape torchaudio does not know (it fades in linearly and "out"
//     upwards), a TimeStretch input with other than NFreq bins.
//   - Options whose torchaudio value a Go zero cannot say are flags
//     (GriffinLim's ZeroMomentum and NoRandInit); a negative
//     InverseMelScale tolerance stands for torchaudio's 0 (no stop), and
//     GriffinLim's n_iter=0 cannot be said.
//   - MuLawEncode gives NaN the code 0 and ±∞ the largest and smallest
//     int64 (nd's saturating conversion; torch's gives −2⁶³ to all
//     three).
//
// In float32 their outputs are within 2·10⁻⁶ of torchaudio's float64
// ones for Vol, Fade and MuLawDecode, 3·10⁻⁵ for LFCC and 10⁻⁴ for
// GriffinLim and InverseMelScale (measured: 2·10⁻⁵), and mu-law codes
// within one code; TimeStretch's accumulated phases reach hundreds of
// radians, where float32 rounds to 10⁻⁴ (measured: 1.1·10⁻⁴).
//
// # ONNX
//
// Spectrogram, MelScale, MelSpectrogram, AmplitudeToDB, MFCC, LFCC, Vol,
// MuLawDecoding and FFT have ONNX forms (gluon.ONNXExporter;
// gluon/onnx.Export writes opset 17): a spectrogram is ONNX's STFT of the centred signal (the centring
// padding a Pad or, circular, a Concat of slices), taken two-sided and
// cut to the one-sided bins, followed by ReduceSumSquare over the complex
// pair for the power; the filter bank and the DCT matrix are constants
// multiplied with MatMul; FFT writes one DFT per axis, in the order
// nd/fft transforms them (fft.Spec.Steps). The signal's length stays
// free in the graph (ExportOpts.FreeAxes), except along an axis whose
// transform length a Spec gives or whose norm scales by it. The other
// Blocks have none: MuLawEncoding's output is integer, which the
// exporter does not take; Fade's envelope depends on the length; the
// phase vocoder, Griffin-Lim and the SGD are host computations.
//
// Masking, unlike torchaudio's, masks only in training mode when used as
// a Block, as Dropout does; its Apply method and Transform mask always.
//
// # WAV files
//
// ReadWAV returns what torchaudio 0.13's load (libsox) returns, value
// for value: every sample passes through a 32-bit integer and lands on a
// grid of 2⁻²⁴, so 8- to 24-bit PCM is exact, 32-bit PCM and floats are
// rounded to that grid, and floats are clipped to [−1, 1]. WriteWAV
// writes the headers libsox writes (the fixtures written by
// torchaudio.save are reproduced byte for byte); SaveWAV replaces a file
// atomically.
//
// # Errors
//
// As in nd, invalid arguments (an unknown window or mel scale, a window
// longer than the transform, an input of the wrong rank or dtype) panic
// with an *nd.Error, which nd.Catch turns into an error value. File
// errors are returned: ErrFormat for files that are not valid WAV or end
// early, ErrUnsupported for compressed and other encodings this package
// does not decode.
package audio
