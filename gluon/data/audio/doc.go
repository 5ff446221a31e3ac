// Package audio is torchaudio's I/O and feature extraction for Goluon:
// WAV files read and written (ReadWAV, LoadWAV, WriteWAV, SaveWAV, as
// torchaudio.load with normalize=True and torchaudio.save), the window
// functions of torch (HannWindow, HammingWindow, BlackmanWindow,
// BartlettWindow, KaiserWindow), mel filter banks and DCT matrices
// (MelFilterBank, DCTMatrix, HzToMel, MelToHz), and torchaudio's
// transforms as Blocks: Spectrogram, MelScale, MelSpectrogram,
// AmplitudeToDB, MFCC, Resample, and SpecAugment's FrequencyMasking and
// TimeMasking (NewFrequencyMasking, NewTimeMasking), and FFT, nd/fft's
// transforms as a Block. Transform turns any of the Blocks into a
// data.Transform for data pipelines.
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
// Under gluon.Hybridize, MelScale, AmplitudeToDB and Resample are traced;
// Spectrogram, MelSpectrogram, MFCC, FFT and the masking are EagerOnly
// (host transforms, host draws), so a network holding one runs eagerly.
//
// # ONNX
//
// Spectrogram, MelScale, MelSpectrogram, AmplitudeToDB, MFCC and FFT
// have ONNX forms (gluon.ONNXExporter; gluon/onnx.Export writes opset
// 17): a spectrogram is ONNX's STFT of the centred signal (the centring
// padding a Pad or, circular, a Concat of slices), taken two-sided and
// cut to the one-sided bins, followed by ReduceSumSquare over the complex
// pair for the power; the filter bank and the DCT matrix are constants
// multiplied with MatMul; FFT writes one DFT per axis, in the order
// nd/fft transforms them (fft.Spec.Steps). The signal's length stays
// free in the graph (ExportOpts.FreeAxes), except along an axis whose
// transform length a Spec gives or whose norm scales by it.
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
