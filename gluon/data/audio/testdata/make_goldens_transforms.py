#!/usr/bin/python3
"""Goldens of the transforms added to gluon/data/audio after the first
set (make_goldens.py runs this at its end): linear_fbanks, LFCC,
GriffinLim, InverseMelScale, mu-law encoding and decoding,
TimeStretch/phase_vocoder, Vol and Fade, from torchaudio 0.13.1 and
torch 1.13 in float64 (torch.set_default_dtype).

Each case records its input, its arguments, the output (complex values as
torch.view_as_real: a trailing axis of 2), a fixed random head R and,
where torchaudio's op is differentiable, the gradient of sum(out * R)
with respect to the input. Random starting points are recorded too:
GriffinLim runs with rand_init=False; InverseMelScale's torch.rand start
is drawn again from the same seed and written as "draws", so that Go can
start from it.

Run from the repository root:
    /usr/bin/python3 gluon/data/audio/testdata/make_goldens_transforms.py
It writes gluon/data/audio/testdata/transforms.json.
"""
import json
import math
import os

import torch
import torchaudio.functional as F
import torchaudio.transforms as T

OUT = os.path.dirname(os.path.abspath(__file__))


def enc(t):
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def main():
    torch.manual_seed(2718)
    torch.set_default_dtype(torch.float64)
    cases = []

    def run(kind, x, module, grad=True, **args):
        """Runs module on x and records the case (with the gradient of
        sum(out * head) when grad)."""
        xr = x.clone().requires_grad_(grad)
        y = module(xr)
        yr = torch.view_as_real(y) if y.is_complex() else y
        c = {"kind": kind, "input": enc(x), "output": enc(yr)}
        if grad:
            head = torch.randn(*yr.shape)
            (g,) = torch.autograd.grad((yr * head).sum(), xr)
            c["head"], c["grad"] = enc(head), enc(g)
        c.update({k: v for k, v in args.items() if v is not None})
        cases.append(c)

    # Linear filter banks: sample rates, bounds, more filters than bins.
    for n_freqs, f_min, f_max, n_filter, sr in [(101, 0.0, 8000.0, 24, 16000), (65, 50.0, 7000.0, 20, 22050),
                                                (9, 0.0, 4000.0, 12, 8000), (33, 300.0, 2500.0, 5, 11025)]:
        cases.append({"kind": "linear_fbank", "n_freqs": n_freqs, "f_min": f_min, "f_max": f_max,
                      "n_filter": n_filter, "sample_rate": sr,
                      "output": enc(F.linear_fbanks(n_freqs, f_min, f_max, n_filter, sr))})

    # LFCC: decibels (a tone reaching the 80 dB floor) and log_lf, both DCT
    # norms, bounds, spectrogram options.
    tone = torch.sin(torch.arange(400) * (2 * math.pi * 1000 / 16000)) + 1e-5 * torch.randn(400)
    LFCCS = [
        ((1, 500), dict(sample_rate=16000, n_lfcc=13, n_filter=40, speckwargs=dict(n_fft=128, hop_length=64)), None),
        ((2, 1, 301), dict(sample_rate=8000, n_lfcc=10, n_filter=20, log_lf=True, speckwargs=dict(n_fft=64)), None),
        ((300,), dict(sample_rate=16000, n_lfcc=8, n_filter=12, norm=None, f_min=100.0, f_max=6000.0,
                      speckwargs=dict(n_fft=50, hop_length=20, power=1.0, center=False)), None),
        ((1, 400), dict(sample_rate=16000, n_lfcc=12, n_filter=30, speckwargs=dict(n_fft=128, hop_length=50)), tone),
    ]
    for shape, kw, given in LFCCS:
        sk = kw["speckwargs"]
        m = T.LFCC(**kw)
        x = given.reshape(shape) if given is not None else torch.randn(*shape)
        run("lfcc", x, m, sample_rate=kw["sample_rate"], n_lfcc=kw["n_lfcc"], n_filter=kw["n_filter"],
            norm="none" if "norm" in kw else "", log_lf=kw.get("log_lf", False), f_min=kw.get("f_min", 0.0),
            f_max=kw.get("f_max", 0.0), n_fft=sk["n_fft"], hop=sk.get("hop_length", 0),
            power=sk.get("power", 2.0), no_center=not sk.get("center", True))

    # GriffinLim from rand_init=False, on spectrograms of noise: defaults
    # (32 iterations, momentum 0.99), magnitudes, no momentum, a shorter
    # window, an odd n_fft, lengths (longer and shorter than the frames
    # cover, keeping their number), one spectrogram without a batch axis.
    WINDOWS = {"hann": torch.hann_window, "hamming": torch.hamming_window}
    GLS = [
        ((1, 300), dict(n_fft=64, hop_length=16), "hann"),
        ((1, 250), dict(n_fft=48, n_iter=6, win_length=40, hop_length=10, power=1.0, momentum=0.0), "hamming"),
        ((200,), dict(n_fft=32, n_iter=5, hop_length=8, momentum=0.5, length=205), "hann"),
        ((3, 160), dict(n_fft=31, n_iter=4, win_length=24, power=1.5, length=158), "hann"),
    ]
    for shape, kw, win in GLS:
        spec_kw = {k: kw[k] for k in ("n_fft", "win_length", "hop_length") if k in kw}
        spec = T.Spectrogram(window_fn=WINDOWS[win], power=kw.get("power", 2.0), **spec_kw)(torch.randn(*shape))
        m = T.GriffinLim(window_fn=WINDOWS[win], rand_init=False, **kw)
        run("griffinlim", spec, m, n_fft=kw["n_fft"], n_iter=kw.get("n_iter", 0),
            win_length=kw.get("win_length", 0), hop=kw.get("hop_length", 0), window=win,
            power=kw.get("power", 2.0), momentum=kw.get("momentum", 0.99), length=kw.get("length", 0))

    # InverseMelScale: torchaudio's SGD from its torch.rand start (drawn
    # again from the seed and recorded), default and other sgdargs, a
    # max_iter reached, weight decay, dampening, Nesterov, leading axes.
    INVMELS = [
        ((2, 33, 5), dict(n_stft=33, n_mels=10, sample_rate=8000)),
        ((3, 2, 17, 4), dict(n_stft=17, n_mels=8, sample_rate=8000, f_min=100.0, f_max=3500.0, norm="slaney",
                             mel_scale="slaney", tolerance_loss=1e-7,
                             sgdargs={"lr": 0.05, "momentum": 0.5, "nesterov": True})),
        ((25, 6), dict(n_stft=25, n_mels=9, sample_rate=16000, max_iter=20,
                       sgdargs={"lr": 0.2, "weight_decay": 0.01})),
        ((1, 41, 3), dict(n_stft=41, n_mels=12, sample_rate=16000, tolerance_change=1e-10,
                          sgdargs={"lr": 0.1, "momentum": 0.9, "dampening": 0.3})),
    ]
    for i, (shape, kw) in enumerate(INVMELS):
        mk = {k: kw[k] for k in ("n_mels", "sample_rate", "f_min", "f_max", "norm", "mel_scale") if k in kw}
        mel = T.MelScale(n_stft=kw["n_stft"], **mk)(torch.rand(*shape))
        m = T.InverseMelScale(**kw)
        b = mel.numel() // (mel.shape[-2] * mel.shape[-1])
        seed = 100 + i
        torch.manual_seed(seed)
        draws = torch.rand(b, shape[-1], kw["n_stft"])
        torch.manual_seed(seed)
        out = m(mel)
        sgd = kw.get("sgdargs")
        cases.append({"kind": "inverse_melscale", "input": enc(mel), "output": enc(out),
                      "draws": [float(v) for v in draws.reshape(-1).tolist()], "n_stft": kw["n_stft"],
                      "n_mels": kw["n_mels"], "sample_rate": kw["sample_rate"], "f_min": kw.get("f_min", 0.0),
                      "f_max": kw.get("f_max", 0.0), "norm": kw.get("norm", ""), "mel_scale": kw.get("mel_scale", "htk"),
                      "max_iter": kw.get("max_iter", 0), "tolerance_loss": kw.get("tolerance_loss", 0.0),
                      "tolerance_change": kw.get("tolerance_change", 0.0), "sgd": sgd})

    # Mu-law: the ends, zero, values beyond ±1 (codes beyond the range),
    # tiny values, noise; 2, 3, 256 and 1024 channels. Decoding of every
    # integer code (float32, as torchaudio's) and of fractional codes
    # (float64, with the gradient).
    edge = torch.tensor([-1.0, 1.0, 0.0, -0.0, 0.5, -0.5, 1e-9, -1e-9, 1.5, -2.0, 0.999, -0.999])
    for ch in [256, 2, 3, 1024]:
        x = torch.cat([edge, torch.rand(40) * 2 - 1])
        run("mulaw_encode", x, lambda v, ch=ch: F.mu_law_encoding(v, ch), grad=False, channels=ch)
        codes = torch.arange(ch) if ch <= 256 else torch.randint(0, ch, (60,))
        run("mulaw_decode_int", codes, lambda v, ch=ch: F.mu_law_decoding(v, ch), grad=False, channels=ch)
        frac = torch.rand(3, 7) * (ch - 1)
        run("mulaw_decode", frac, lambda v, ch=ch: F.mu_law_decoding(v, ch), channels=ch)

    # TimeStretch on complex spectrograms (the input is their real view):
    # speed-ups and slow-downs whose time steps include torch.arange's
    # fused values, rate 1, the default hop, a fixed rate; phase_vocoder
    # with a given phase advance.
    # torch.arange's time steps: its fused multiply-adds (see torchArange)
    # put 0.7·30 and 1.4·15 just below 21, so those steps take frames 20
    # and 21 (1.4·15: the zero padding), where k·rate would take 21 and 22.
    STRETCHES = [
        ((1, 9, 40), dict(n_freq=9, hop_length=4), 1.3),
        ((5, 22), dict(n_freq=5), 0.7),
        ((2, 1, 5, 33), dict(n_freq=5, hop_length=2, fixed_rate=0.9), None),
        ((5, 12), dict(n_freq=5, hop_length=2), 1.0),
        ((1, 7, 60), dict(n_freq=7, hop_length=10), 1.1),
        ((1, 7, 21), dict(n_freq=7, hop_length=3), 1.4),
    ]
    crossed = 0
    for shape, kw, rate in STRETCHES:
        r = rate or kw["fixed_rate"]
        steps = torch.arange(0, shape[-1], r)
        crossed += sum(math.floor(v) != math.floor(i * r) for i, v in enumerate(steps.tolist()))
        # Whether float32's time steps take other frames than float64's
        # (torch's own float32 result then differs from its float64 one).
        f32 = torch.arange(0, shape[-1], r, dtype=torch.float32).tolist()
        f32_frames = any(math.floor(a) != math.floor(b) for a, b in zip(f32, steps.tolist()))
        z = torch.view_as_real(torch.randn(*shape, dtype=torch.complex128))
        m = T.TimeStretch(**kw)
        run("timestretch", z, lambda v, m=m, rate=rate: m(torch.view_as_complex(v), rate),
            n_freq=kw["n_freq"], hop=kw.get("hop_length", 0), fixed_rate=kw.get("fixed_rate", 0.0),
            rate=rate or 0.0, f32_frames=f32_frames)
    assert crossed == 2, "the time steps that torch.arange puts in another frame than k*rate moved"
    for n, rate in [(22, 0.7), (21, 1.4), (40, 1.3), (10, 0.3), (300, 0.123), (61, 0.48), (5, 2.5)]:
        for dt in ["float64", "float32"]:
            cases.append({"kind": "arange", "length": n, "rate": rate, "dtype": dt,
                          "output": enc(torch.arange(0, n, rate, dtype=getattr(torch, dt)).double())})
    z = torch.view_as_real(torch.randn(2, 7, 15, dtype=torch.complex128))
    adv = torch.rand(7, 1) * 6
    run("phase_vocoder", z, lambda v: F.phase_vocoder(torch.view_as_complex(v), 0.7, adv),
        rate=0.7, advance=enc(adv))

    # Vol: every gain type, clamping, the gains torchaudio skips.
    for gain, gtype in [(0.5, "amplitude"), (3.0, "amplitude"), (0.0, "amplitude"), (6.0, "db"), (-10.0, "db"),
                        (0.0, "db"), (2.0, "power"), (0.1, "power"), (1.0, "power")]:
        run("vol", torch.randn(1, 24) * 0.5, T.Vol(gain, gtype), gain=gain, gain_type=gtype)

    # Fade: every shape, overlapping fades, fades of 0 and 1 samples.
    for shape, fin, fout in [((2, 30), 10, 12), ((20,), 20, 20), ((2, 2, 16), 16, 5), ((1, 9), 1, 0), ((4,), 0, 0)]:
        for fs in ["linear", "logarithmic", "exponential", "quarter_sine", "half_sine"]:
            run("fade", torch.randn(*shape), T.Fade(fin, fout, fs), fade_in=fin, fade_out=fout, fade_shape=fs)

    with open(os.path.join(OUT, "transforms.json"), "w") as f:
        json.dump({"cases": cases}, f, separators=(",", ":"))
    print(len(cases), "transform goldens")


if __name__ == "__main__":
    main()
