package fft

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// STFTOpts are the options of STFT and ISTFT, PyTorch's keyword arguments
// with zero values that mean PyTorch's defaults.
type STFTOpts struct {
	// Hop is the distance between frames' starts (0: nFFT/4).
	Hop int
	// WinLength is the window's length, at most nFFT (0: the Window's
	// length, or nFFT without one; PyTorch's default is always nFFT). A window shorter than nFFT is padded
	// with zeros on both sides to centre it in the frame.
	WinLength int
	// Window multiplies each frame: a vector of WinLength values of the
	// signal's dtype and context, nil for a rectangular window (ones). A
	// Window that needs a gradient gets one.
	Window *nd.NDArray
	// NoCenter starts the first frame at sample 0 (center=False); by
	// default the signal is padded by nFFT/2 on both sides (STFT) and the
	// padding dropped again (ISTFT), so that frame t is centred on sample
	// t·Hop.
	NoCenter bool
	// PadMode is how STFT fills the centring padding: "reflect" (the
	// default, ""), "constant" (zeros), "replicate" or "circular".
	PadMode string
	// Normalized scales each frame's transform by 1/√nFFT (Ortho).
	Normalized bool
	// TwoSided makes STFT return all nFFT frequency bins instead of the
	// nFFT/2+1 of a real signal (onesided=False). ISTFT infers it from
	// its input's number of bins.
	TwoSided bool
	// Length is the length ISTFT's signal is trimmed or padded with zeros
	// to (0: all the samples the frames cover). STFT ignores it.
	Length int
}

// frameArgs checks and resolves the options shared by STFT and ISTFT:
// the hop and the window padded to nFFT (nil for all ones).
func frameArgs(op string, like *nd.NDArray, nFFT int, o STFTOpts) (hop int, win *nd.NDArray) {
	if nFFT < 1 {
		nd.Panicf(op, nd.ErrArgument, "nFFT %d: want at least 1", nFFT)
	}
	hop = o.Hop
	if hop == 0 {
		hop = nFFT / 4
	}
	if hop < 1 {
		nd.Panicf(op, nd.ErrArgument, "hop %d: want at least 1 (the default nFFT/4 is 0 for nFFT %d; set Hop)", hop, nFFT)
	}
	wl := o.WinLength
	if wl == 0 {
		wl = nFFT
		if o.Window != nil && o.Window.NDim() == 1 {
			wl = o.Window.Shape()[0]
		}
	}
	if wl < 1 || wl > nFFT {
		nd.Panicf(op, nd.ErrArgument, "window length %d: want 1 to nFFT = %d", wl, nFFT)
	}
	win = o.Window
	if win != nil {
		if s := win.Shape(); len(s) != 1 || s[0] != wl {
			nd.Panicf(op, nd.ErrShape, "window of shape %v: want [%d]", s, wl)
		}
		if win.DType() != like.DType() {
			nd.Panicf(op, nd.ErrDType, "window of %v for a signal of %v", win.DType(), like.DType())
		}
	} else if wl < nFFT {
		win = like.Session().Full(like.Context(), like.DType(), 1, wl)
	}
	if win != nil && wl < nFFT {
		left := (nFFT - wl) / 2
		win = nd.Pad(win, [][2]int{{left, nFFT - wl - left}}, nd.PadConstant, 0)
	}
	return hop, win
}

// STFT returns the short-time Fourier transform of the real signals x
// [..., L] (torch.stft with return_complex, as view_as_real): the
// transforms of frames of nFFT samples, Hop apart, each multiplied by the
// window, as a complex array [..., F, T, 2] of F = nFFT/2+1 bins (nFFT
// when TwoSided) and T frames. Frame t covers samples t·Hop …
// t·Hop+nFFT−1 of the signal padded by nFFT/2 on each side (unpadded
// with NoCenter). x may have any number of leading axes (PyTorch's one or
// none) and must be real. It is composed of nd's gather, the window's
// product and RFFT, so x and the window get gradients.
func STFT(x *nd.NDArray, nFFT int, o STFTOpts) *nd.NDArray {
	const op = "fft.STFT"
	shape := checkArray(op, x, false)
	hop, win := frameArgs(op, x, nFFT, o)
	l := shape[len(shape)-1]
	var idx []int // the padded signal's sample for each position
	if o.NoCenter {
		idx = make([]int, l)
		for i := range idx {
			idx[i] = i
		}
	} else {
		idx, x = centre(op, x, nFFT/2, o.PadMode)
	}
	if nFFT > len(idx) {
		nd.Panicf(op, nd.ErrArgument, "nFFT %d is longer than the signal of %d samples (padded to %d)", nFFT, l, len(idx))
	}
	frames := 1 + (len(idx)-nFFT)/hop
	at := make([]int, 0, frames*nFFT)
	for t := range frames {
		at = append(at, idx[t*hop:t*hop+nFFT]...)
	}
	ia := x.Session().FromSlice(x.Context(), at, frames, nFFT)
	f := nd.Take(x, ia, -1) // [..., T, nFFT]
	if win != nil {
		f = nd.Mul(f, win)
	}
	norm := Backward
	if o.Normalized {
		norm = Ortho
	}
	var spec *nd.NDArray
	if o.TwoSided {
		spec = FFT(Complex(f, nil), 0, -1, norm)
	} else {
		spec = RFFT(f, 0, -1, norm)
	}
	return nd.SwapAxes(spec, -3, -2)
}

// centre returns, for STFT's centring padding of p samples per side, the
// sample of x each padded position reads (reflect, replicate, circular),
// with x itself; or, for constant padding, the positions of x padded with
// zeros.
func centre(op string, x *nd.NDArray, p int, mode string) ([]int, *nd.NDArray) {
	s := x.Shape()
	l := s[len(s)-1]
	idx := make([]int, 0, l+2*p)
	switch mode {
	case "", "reflect":
		if p >= l {
			nd.Panicf(op, nd.ErrArgument, "reflect padding of %d needs a signal longer than %d samples, got %d", p, p, l)
		}
		for i := -p; i < l+p; i++ {
			k := i
			if k < 0 {
				k = -k
			}
			if k >= l {
				k = 2*(l-1) - k
			}
			idx = append(idx, k)
		}
	case "replicate":
		if l == 0 {
			nd.Panicf(op, nd.ErrArgument, "replicate padding of an empty signal")
		}
		for i := -p; i < l+p; i++ {
			idx = append(idx, min(max(i, 0), l-1))
		}
	case "circular":
		if p > l {
			nd.Panicf(op, nd.ErrArgument, "circular padding of %d needs a signal of at least %d samples, got %d", p, p, l)
		}
		for i := -p; i < l+p; i++ {
			idx = append(idx, (i%l+l)%l)
		}
	case "constant":
		widths := make([][2]int, len(s))
		widths[len(s)-1] = [2]int{p, p}
		x = nd.Pad(x, widths, nd.PadConstant, 0)
		for i := range l + 2*p {
			idx = append(idx, i)
		}
	default:
		nd.Panicf(op, nd.ErrArgument, "pad mode %q: want \"reflect\", \"constant\", \"replicate\" or \"circular\"", mode)
	}
	return idx, x
}

// ISTFT returns the signals [..., L] whose STFT is z [..., F, T, 2]
// (torch.istft, real output): each frame's inverse transform (IRFFT of
// nFFT points; of a two-sided z, F = nFFT, its first nFFT/2+1 bins) is
// multiplied by the window, the frames are overlap-added, and the sum is
// divided by the overlap-added squared window, which must not vanish
// anywhere in the result (the NOLA condition). With the options STFT was
// given it inverts STFT; Length trims or zero-pads the result. PadMode
// and TwoSided are not read. z and the window get gradients.
func ISTFT(z *nd.NDArray, nFFT int, o STFTOpts) *nd.NDArray {
	const op = "fft.ISTFT"
	sig := checkArray(op, z, true)
	hop, win := frameArgs(op, z, nFFT, o)
	if len(sig) < 2 {
		nd.Panicf(op, nd.ErrShape, "needs a complex array [..., F, T, 2], got shape %v", z.Shape())
	}
	bins, frames := sig[len(sig)-2], sig[len(sig)-1]
	if bins != nFFT/2+1 && bins != nFFT {
		nd.Panicf(op, nd.ErrShape, "%d frequency bins for nFFT %d: want %d (one-sided) or %d", bins, nFFT, nFFT/2+1, nFFT)
	}
	if frames < 1 {
		nd.Panicf(op, nd.ErrShape, "no frames (shape %v)", z.Shape())
	}
	if o.Length < 0 {
		nd.Panicf(op, nd.ErrArgument, "negative length %d", o.Length)
	}
	norm := Backward
	if o.Normalized {
		norm = Ortho
	}
	f := IRFFT(nd.SwapAxes(z, -3, -2), nFFT, -1, norm) // [..., T, nFFT]
	if win != nil {
		f = nd.Mul(f, win)
	} else {
		win = z.Session().Full(z.Context(), z.DType(), 1, nFFT)
	}
	span := nFFT + hop*(frames-1)
	at := make([]int, 0, frames*nFFT)
	for t := range frames {
		for k := range nFFT {
			at = append(at, t*hop+k)
		}
	}
	ia := z.Session().FromSlice(z.Context(), at)
	lead := append([]int(nil), sig[:len(sig)-2]...)
	y := nd.IndexAdd(z.Session().Zeros(z.Context(), z.DType(), append(lead, span)...), ia,
		nd.Reshape(f, append(lead, frames*nFFT)...), -1)
	w2 := nd.Reshape(nd.BroadcastTo(nd.Mul(win, win), frames, nFFT), frames*nFFT)
	env := nd.IndexAdd(z.Session().Zeros(z.Context(), z.DType(), span), ia, w2, 0)

	start := 0
	end := span
	if !o.NoCenter {
		start, end = nFFT/2, span-nFFT/2
	}
	if o.Length > 0 {
		end = start + o.Length
	}
	stop := min(end, span)
	y = nd.SliceAxis(y, start, stop, -1)
	env = nd.SliceAxis(env, start, stop, 0)
	for i, v := range env.Float64s() {
		if !(math.Abs(v) >= 1e-11) {
			nd.Panicf(op, nd.ErrArgument, "the overlap-added squared window is %g at sample %d: the window and hop %d break the NOLA condition", v, start+i, hop)
		}
	}
	y = nd.Div(y, env)
	if end > span {
		widths := make([][2]int, y.NDim())
		widths[len(widths)-1] = [2]int{0, end - span}
		y = nd.Pad(y, widths, nd.PadConstant, 0)
	}
	return y
}
