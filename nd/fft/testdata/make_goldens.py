#!/usr/bin/python3
"""Goldens for golden_test.go: torch.fft (Debian's python3-torch) in
float64. Each case records the input (complex tensors as
torch.view_as_real, a trailing axis of 2), the arguments, the output (the
same layout), a fixed random head R and the gradient of sum(out * R) with
respect to the input, taken through view_as_complex so that it is the
(d/dre, d/dim) pair goldens compare with.

Run from the repository root:
    /usr/bin/python3 nd/fft/testdata/make_goldens.py
It writes nd/fft/testdata/goldens.json.
"""
import json

import torch

torch.manual_seed(53)
torch.set_default_dtype(torch.float64)

NORMS = ["backward", "ortho", "forward"]
cases = []


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def case(op, shape, fn, complex_in, **args):
    """Runs fn on a random input of the (complex) shape and records it."""
    x = torch.randn(*shape, 2) if complex_in else torch.randn(*shape)
    xr = x.clone().requires_grad_(True)
    y = fn(torch.view_as_complex(xr) if complex_in else xr)
    yr = torch.view_as_real(y.resolve_conj()) if y.is_complex() else y
    head = torch.randn(*yr.shape)
    (g,) = torch.autograd.grad((yr * head).sum(), xr)
    c = {"op": op, "input": enc(x), "output": enc(yr), "head": enc(head), "grad": enc(g)}
    c.update({k: v for k, v in args.items() if v is not None})
    cases.append(c)


ONE = {"FFT": (torch.fft.fft, True), "IFFT": (torch.fft.ifft, True),
       "RFFT": (torch.fft.rfft, False), "IRFFT": (torch.fft.irfft, True),
       "HFFT": (torch.fft.hfft, True), "IHFFT": (torch.fft.ihfft, False)}
HALF_IN = {"IRFFT", "HFFT", "IRFFT2", "HFFT2", "IRFFTN", "HFFTN"}

# One dimension: odd, even, prime (7, 13; 67 goes through Bluestein) and
# power-of-two lengths, each norm twice, a batch axis.
for op, (fn, cin) in ONE.items():
    for i, length in enumerate([2, 7, 8, 13, 16, 67]):
        norm = NORMS[i % 3]
        case(op, (2, length), lambda x, fn=fn, norm=norm: fn(x, norm=norm), cin, n=0, dim=-1, norm=norm)
    for length in [3, 5]:  # an odd output length from a half spectrum
        if op in HALF_IN:
            case(op, (2, length), lambda x, fn=fn, n=2 * length - 1: fn(x, n=n), cin, n=2 * length - 1, dim=-1)
    # Padding and truncation, along a leading axis, in every norm.
    for i, (length, n) in enumerate([(5, 9), (9, 4), (6, 6), (8, 13), (12, 7), (4, 1 if op not in HALF_IN else 2)]):
        norm = NORMS[i % 3]
        case(op, (length, 3), lambda x, fn=fn, n=n, norm=norm: fn(x, n=n, dim=0, norm=norm), cin, n=n, dim=0, norm=norm)
    case(op, (2, 3, 10), lambda x, fn=fn: fn(x, dim=1), cin, n=0, dim=1)
    case(op, (1,) if op not in HALF_IN else (2,), lambda x, fn=fn: fn(x), cin, n=0, dim=-1)

TWO = {"FFT2": (torch.fft.fft2, True), "IFFT2": (torch.fft.ifft2, True),
       "RFFT2": (torch.fft.rfft2, False), "IRFFT2": (torch.fft.irfft2, True),
       "HFFT2": (torch.fft.hfft2, True), "IHFFT2": (torch.fft.ihfft2, False),
       "FFTN": (torch.fft.fftn, True), "IFFTN": (torch.fft.ifftn, True),
       "RFFTN": (torch.fft.rfftn, False), "IRFFTN": (torch.fft.irfftn, True),
       "HFFTN": (torch.fft.hfftn, True), "IHFFTN": (torch.fft.ihfftn, False)}

# Several dimensions: defaults, lengths (padding one axis, truncating
# another), explicit and reordered axes (the half-spectrum axis is the
# last one listed), and a −1 length.
for op, (fn, cin) in TWO.items():
    nd_ = op.endswith("N")
    for norm in NORMS:
        case(op, (2, 3, 4), lambda x, fn=fn, norm=norm: fn(x, norm=norm), cin, norm=norm)
    case(op, (2, 3, 4), lambda x, fn=fn: fn(x, s=(2, 6), norm="ortho"), cin, s=[2, 6], norm="ortho")
    case(op, (3, 2, 5), lambda x, fn=fn: fn(x, dim=(0, 2), norm="forward"), cin, dims=[0, 2], norm="forward")
    case(op, (3, 2, 5), lambda x, fn=fn: fn(x, dim=(-1, 0)), cin, dims=[-1, 0])
    case(op, (3, 4, 2), lambda x, fn=fn: fn(x, s=(5, -1), dim=(1, 0)), cin, s=[5, -1], dims=[1, 0])
    if nd_:
        case(op, (2, 3, 4), lambda x, fn=fn: fn(x, s=(5, 3)), cin, s=[5, 3])  # the last two axes
        case(op, (3, 2, 4), lambda x, fn=fn: fn(x, s=(2, 5, 3), norm="ortho"), cin, s=[2, 5, 3], norm="ortho")
        case(op, (13,), lambda x, fn=fn: fn(x), cin)

# Complex helpers; zeros where the gradients of abs and angle are defined
# by convention (0).
z = torch.randn(3, 4, 2)
z[1, 2] = 0
for op, fn in {"Abs": torch.abs, "Angle": torch.angle, "Conj": lambda c: torch.conj(c).resolve_conj()}.items():
    x = z.clone().requires_grad_(True)
    y = fn(torch.view_as_complex(x))
    yr = torch.view_as_real(y.resolve_conj()) if y.is_complex() else y
    head = torch.randn(*yr.shape)
    (g,) = torch.autograd.grad((yr * head).sum(), x)
    cases.append({"op": op, "input": enc(z), "output": enc(yr), "head": enc(head), "grad": enc(g)})

for n in [1, 5, 6, 8]:
    for d in [1.0, 0.25]:
        cases.append({"op": "FFTFreq", "n": n, "d": d, "output": enc(torch.fft.fftfreq(n, d))})
        cases.append({"op": "RFFTFreq", "n": n, "d": d, "output": enc(torch.fft.rfftfreq(n, d))})

for op, fn in {"FFTShift": torch.fft.fftshift, "IFFTShift": torch.fft.ifftshift}.items():
    for shape, dims in [((4, 5), None), ((3, 5, 6), [0, 2]), ((7,), [-1])]:
        x = torch.randn(*shape).requires_grad_(True)
        y = fn(x, dim=dims)
        head = torch.randn(*y.shape)
        (g,) = torch.autograd.grad((y * head).sum(), x)
        c = {"op": op, "input": enc(x), "output": enc(y), "head": enc(head), "grad": enc(g)}
        if dims is not None:
            c["dims"] = dims
        cases.append(c)

# Short-time transforms: gradients for the signal (or spectrum) and the
# window.
def stft_case(op, x, n_fft, window=None, **kw):
    xr = x.clone().requires_grad_(True)
    w = window.clone().requires_grad_(True) if window is not None else None
    if op == "STFT":
        y = torch.stft(xr, n_fft, window=w, return_complex=True, **kw)
        y = torch.view_as_real(y)
    else:
        y = torch.istft(torch.view_as_complex(xr), n_fft, window=w, **kw)
    head = torch.randn(*y.shape)
    gs = torch.autograd.grad((y * head).sum(), [xr] + ([w] if w is not None else []))
    c = {"op": op, "n": n_fft, "input": enc(x), "output": enc(y), "head": enc(head), "grad": enc(gs[0])}
    if w is not None:
        c["window"], c["windowgrad"] = enc(window), enc(gs[1])
    names = {"hop_length": "hop", "win_length": "winlength", "pad_mode": "padmode", "normalized": "normalized",
             "length": "length"}
    for k, v in kw.items():
        if k == "center":
            c["nocenter"] = not v
        elif k == "onesided":
            c["twosided"] = not v
        else:
            c[names[k]] = v
    cases.append(c)


stft_case("STFT", torch.randn(200), 32, torch.hann_window(32), hop_length=8)
stft_case("STFT", torch.randn(2, 60), 16, torch.hann_window(10), win_length=10, pad_mode="constant", normalized=True)
stft_case("STFT", torch.randn(40), 15, None, hop_length=4, center=False, onesided=False)
stft_case("STFT", torch.randn(2, 37), 16, torch.hamming_window(16), hop_length=5, pad_mode="replicate")
stft_case("STFT", torch.randn(29), 12, None, hop_length=3, win_length=7, pad_mode="circular")
stft_case("ISTFT", torch.randn(17, 9, 2), 32, torch.hann_window(32), hop_length=8)
stft_case("ISTFT", torch.randn(2, 9, 11, 2), 16, torch.hann_window(12), hop_length=4, win_length=12,
          normalized=True, length=37)
stft_case("ISTFT", torch.randn(12, 6, 2), 12, None, hop_length=5, center=False, length=40)  # two-sided; pads
stft_case("ISTFT", torch.randn(8, 10, 2), 15, torch.hamming_window(15), hop_length=4)

# Shifts of complex spectra (ComplexFFTShift, ComplexIFFTShift): dims
# count the complex signal's axes; odd and even lengths, a signal axis of
# 2 beside the pair axis.
for op, fn in {"ComplexFFTShift": torch.fft.fftshift, "ComplexIFFTShift": torch.fft.ifftshift}.items():
    for shape, dims in [((4, 5), None), ((7,), None), ((3, 2), None), ((3, 6), [0]), ((5, 3, 4), [-1, 0]),
                        ((6, 2), [-1])]:
        case(op, shape, lambda z, fn=fn, dims=dims: fn(z, dim=dims), True, dims=dims)

with open("nd/fft/testdata/goldens.json", "w") as fh:
    json.dump({"generator": "make_goldens.py, torch " + torch.__version__, "cases": cases}, fh, separators=(",", ":"))
    fh.write("\n")
print("wrote", len(cases), "cases")
