#!/usr/bin/python3
"""Goldens and WAV fixtures for gluon/data/audio's tests, from torchaudio
0.13.1 and torch 1.13 (Debian's python3-torchaudio and python3-torch).

The transforms run in float64 (torch.set_default_dtype, so windows, mel
filter banks and DCT matrices are computed in float64 too). Each case
records its input, its arguments, the output (a complex spectrogram as
torch.view_as_real: a trailing axis of 2), a fixed random head R and the
gradient of sum(out * R) with respect to the input where torchaudio's
transform is differentiable.

The WAV fixtures are written with Python's wave module, torchaudio.save
and, for the headers neither writes (extensible float, extra chunks, odd
chunk sizes), by hand; wav.json holds what torchaudio.load (normalize=True)
reads from each.

Run from the repository root:
    /usr/bin/python3 gluon/data/audio/testdata/make_goldens.py
It writes gluon/data/audio/testdata/{goldens.json,wav.json,saves.json,*.wav},
and, by make_goldens_transforms.py, transforms.json (the transforms added
later: LFCC, GriffinLim, InverseMelScale, mu-law, TimeStretch, Vol, Fade).
"""
import json
import math
import os
import struct
import sys
import wave

import torch
import torchaudio
import torchaudio.functional as F
import torchaudio.transforms as T

OUT = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(1313)
torch.set_default_dtype(torch.float64)
cases = []


def enc(t):
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def run(kind, x, module, grad=True, **args):
    """Runs module on x and records the case (with the gradient of
    sum(out * head) when grad)."""
    xr = x.clone().requires_grad_(grad)
    y = module(xr)
    yr = torch.view_as_real(y) if y.is_complex() else y
    head = torch.randn(*yr.shape)
    c = {"kind": kind, "input": enc(x), "output": enc(yr), "head": enc(head)}
    if grad:
        (g,) = torch.autograd.grad((yr * head).sum(), xr)
        c["grad"] = enc(g)
    c.update({k: v for k, v in args.items() if v is not None})
    cases.append(c)


# Windows: torch's window functions, periodic and symmetric.
WINDOWS = {"hann": torch.hann_window, "hamming": torch.hamming_window,
           "blackman": torch.blackman_window, "bartlett": torch.bartlett_window}
for name, fn in WINDOWS.items():
    for n in [1, 2, 7, 16]:
        for periodic in [True, False]:
            cases.append({"kind": "window", "window": name, "n": n, "periodic": periodic,
                          "output": enc(fn(n, periodic=periodic))})
for n, periodic, beta in [(1, True, 12.0), (9, True, 12.0), (9, False, 12.0), (16, True, 5.0), (8, False, 0.0)]:
    cases.append({"kind": "window", "window": "kaiser", "n": n, "periodic": periodic, "beta": beta,
                  "output": enc(torch.kaiser_window(n, periodic=periodic, beta=beta))})


def window_fn(name, beta=None):
    if name == "kaiser":
        return lambda n: torch.kaiser_window(n, True, beta)
    return WINDOWS[name]


# Spectrogram: hop and window defaults, odd and even n_fft, a shorter
# window, every pad mode and normalisation, complex output, two-sided.
SPECS = [
    ((1, 300), dict(n_fft=64), "hann", None),
    ((2, 2, 157), dict(n_fft=50, win_length=40, hop_length=13, pad=3, power=1.0, normalized=True), "hamming", None),
    ((151,), dict(n_fft=33, hop_length=8, power=None, normalized="frame_length", center=False, onesided=False), "hann", None),
    ((2, 200), dict(n_fft=32, hop_length=10, pad_mode="constant", normalized="window"), "blackman", None),
    ((3, 101), dict(n_fft=20, win_length=15, hop_length=7, power=None, pad_mode="replicate"), "kaiser", 8.0),
    ((1, 90), dict(n_fft=16, hop_length=5, power=0.5, pad_mode="circular"), "bartlett", None),
]
for shape, kw, win, beta in SPECS:
    m = T.Spectrogram(window_fn=window_fn(win, beta), **kw)
    args = {"n_fft": kw["n_fft"], "win_length": kw.get("win_length", 0), "hop": kw.get("hop_length", 0),
            "pad": kw.get("pad", 0), "window": win, "beta": beta,
            "power": kw.get("power", 2.0), "complex": "power" in kw and kw["power"] is None,
            "normalized": {True: "window", False: ""}.get(kw.get("normalized", False), kw.get("normalized")),
            "no_center": not kw.get("center", True), "pad_mode": kw.get("pad_mode", ""),
            "two_sided": not kw.get("onesided", True)}
    if args["power"] is None:
        args["power"] = 0.0
    run("spectrogram", torch.randn(*shape), m, **args)

# Mel filter banks: both scales and norms, f_min/f_max, an empty filter.
FBANKS = [
    (101, 0.0, 8000.0, 24, 16000, None, "htk"),
    (65, 50.0, 7000.0, 20, 22050, "slaney", "slaney"),
    (129, 0.0, 4000.0, 23, 8000, "slaney", "htk"),
    (33, 100.0, 5000.0, 12, 11025, None, "slaney"),
    (9, 0.0, 8000.0, 16, 16000, None, "htk"),  # more mels than bins: empty filters
]
for n_freqs, f_min, f_max, n_mels, sr, norm, scale in FBANKS:
    cases.append({"kind": "fbank", "n_freqs": n_freqs, "f_min": f_min, "f_max": f_max, "n_mels": n_mels,
                  "sample_rate": sr, "norm": norm or "", "mel_scale": scale,
                  "output": enc(F.melscale_fbanks(n_freqs, f_min, f_max, n_mels, sr, norm, scale))})
for f, scale in [(0.0, "htk"), (440.0, "htk"), (999.0, "slaney"), (1000.0, "slaney"), (8000.0, "slaney"), (8000.0, "htk")]:
    cases.append({"kind": "hz_to_mel", "f_min": f, "mel_scale": scale,
                  "output": {"shape": [], "data": [F.functional._hz_to_mel(f, scale)]}})

for n_mfcc, n_mels, norm in [(13, 23, "ortho"), (5, 8, None), (1, 1, "ortho")]:
    cases.append({"kind": "dct", "n_mfcc": n_mfcc, "n_mels": n_mels, "norm": norm or "none",
                  "output": enc(F.create_dct(n_mfcc, n_mels, norm))})

# MelScale alone, on a power spectrogram (batched).
for shape, kw in [((2, 33, 6), dict(n_mels=10, sample_rate=16000, n_stft=33)),
                  ((3, 2, 17, 4), dict(n_mels=8, sample_rate=8000, f_min=60.0, f_max=3000.0, n_stft=17,
                                       norm="slaney", mel_scale="slaney"))]:
    m = T.MelScale(**kw)
    run("melscale", torch.rand(*shape), m, n_mels=kw["n_mels"], sample_rate=kw["sample_rate"],
        f_min=kw.get("f_min", 0.0), f_max=kw.get("f_max", 0.0), norm=kw.get("norm", ""),
        mel_scale=kw.get("mel_scale", "htk"))

# MelSpectrogram.
MELS = [
    ((1, 400), dict(sample_rate=16000, n_fft=128, n_mels=20)),
    ((2, 2, 233), dict(sample_rate=22050, n_fft=100, hop_length=25, n_mels=16, f_min=30.0, f_max=8000.0,
                       norm="slaney", mel_scale="slaney", power=1.0)),
    ((257,), dict(sample_rate=8000, n_fft=64, win_length=48, hop_length=16, n_mels=12, center=False)),
]
for shape, kw in MELS:
    m = T.MelSpectrogram(**kw)
    run("melspectrogram", torch.randn(*shape), m, sample_rate=kw["sample_rate"], n_fft=kw["n_fft"],
        win_length=kw.get("win_length", 0), hop=kw.get("hop_length", 0), n_mels=kw["n_mels"],
        f_min=kw.get("f_min", 0.0), f_max=kw.get("f_max", 0.0), norm=kw.get("norm", ""),
        mel_scale=kw.get("mel_scale", "htk"), power=kw.get("power", 2.0), no_center=not kw.get("center", True))

# AmplitudeToDB: with and without top_db, 2-, 3- and 4-D, values below
# amin (clamped: no gradient).
for shape, stype, top_db in [((5, 7), "power", None), ((3, 4, 6), "magnitude", 40.0),
                             ((2, 3, 5, 4), "power", 30.0), ((6, 5), "magnitude", 25.0), ((2, 4, 3), "power", None)]:
    x = torch.rand(*shape) ** 4
    x.view(-1)[3] = 1e-12
    x.view(-1)[5] = 0.0
    run("db", x, T.AmplitudeToDB(stype, top_db), stype=stype, top_db=top_db)
x = torch.rand(4, 5) * 3
run("db_to_amplitude", x, lambda v: F.DB_to_amplitude(v, 2.0, 0.5), ref=2.0, power=0.5)

# MFCC.
MFCCS = [
    ((1, 500), dict(sample_rate=16000, n_mfcc=13, melkwargs=dict(n_fft=128, n_mels=23, hop_length=64))),
    ((2, 2, 301), dict(sample_rate=8000, n_mfcc=10, log_mels=True, melkwargs=dict(n_fft=64, n_mels=16))),
    ((300,), dict(sample_rate=16000, n_mfcc=8, norm=None, melkwargs=dict(n_fft=50, n_mels=12, hop_length=20,
                                                                          mel_scale="slaney", norm="slaney"))),
]
# A tone over faint noise: its quiet mel bands fall under the 80 dB floor.
tone = torch.sin(torch.arange(400) * (2 * math.pi * 1000 / 16000)) + 1e-5 * torch.randn(400)
MFCCS.append(((1, 400), dict(sample_rate=16000, n_mfcc=12, melkwargs=dict(n_fft=128, n_mels=20, hop_length=50)), tone))
for shape, kw, *given in MFCCS:
    mk = kw["melkwargs"]
    m = T.MFCC(**kw)
    x = given[0].reshape(shape) if given else torch.randn(*shape)
    if given:
        mel = m.MelSpectrogram(x)
        db = 10 * torch.log10(mel.clamp(min=1e-10))
        assert (db < db.amax() - 80).sum() > 0, "the tone case should reach the 80 dB floor"
    run("mfcc", x, m, sample_rate=kw["sample_rate"], n_mfcc=kw["n_mfcc"],
        norm="none" if "norm" in kw else "", log_mels=kw.get("log_mels", False), n_fft=mk["n_fft"],
        n_mels=mk["n_mels"], hop=mk.get("hop_length", 0), mel_scale=mk.get("mel_scale", "htk"),
        mel_norm=mk.get("norm", ""))

# Resample: down, up, co-prime rates, kaiser windows, batches, odd lengths.
RESAMPLES = [
    ((1, 200), 16000, 8000, {}, True),
    ((2, 121), 8000, 16000, {}, True),
    ((2, 2, 93), 44100, 16000, {}, False),
    ((1, 160), 48000, 44100, dict(lowpass_filter_width=4, rolloff=0.9), False),
    ((3, 101), 22050, 16000, dict(resampling_method="kaiser_window"), True),
    ((77,), 3, 5, dict(resampling_method="kaiser_window", beta=8.0, lowpass_filter_width=3), True),
    ((1, 64), 16000, 16000, {}, False),
]
for shape, orig, new, kw, grad in RESAMPLES:
    m = T.Resample(orig, new, dtype=torch.float64, **kw)
    method = kw.get("resampling_method", "sinc_interpolation")
    run("resample", torch.randn(*shape), m, grad=grad, orig=orig, new=new,
        width=kw.get("lowpass_filter_width", 0), rolloff=kw.get("rolloff", 0.0),
        method={"sinc_interpolation": "sinc_interp_hann", "kaiser_window": "sinc_interp_kaiser"}[method],
        beta=kw.get("beta", 0.0))

# Masking with given draws: torch.rand is replaced by a function returning
# them, so that Go can feed the same uniforms to its mask.
real_rand = torch.rand
MASKS = [
    ((2, 10, 8), "freq", 4, False, 1.0, [0.7, 0.3]),
    ((2, 10, 8), "time", 5, False, 1.0, [0.99, 0.999]),
    ((3, 2, 6, 9), "time", 4, True, 1.0, None),
    ((3, 2, 6, 9), "freq", 3, True, 1.0, None),
    ((1, 5, 20), "time", 10, False, 0.2, [0.95, 0.5]),
]


def mask_case(shape, axis, param, iid, p, draws):
    x = torch.randn(*shape)
    if draws is None:
        draws = torch.rand(2 * shape[0] * shape[1]).tolist()
    queue = list(draws)
    nxt = [0]

    def fake_rand(*size, dtype=None, device=None):
        if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
            size = tuple(size[0])
        n = math.prod(size)
        out = torch.tensor(queue[nxt[0]:nxt[0] + n], dtype=dtype or torch.float32).reshape(size)
        nxt[0] += n
        return out

    mod = T.FrequencyMasking(param, iid_masks=iid) if axis == "freq" else T.TimeMasking(param, iid_masks=iid, p=p)
    torch.rand = fake_rand
    try:
        y = mod(x, mask_value=-1.5)
    finally:
        torch.rand = real_rand
    cases.append({"kind": "mask", "axis": axis, "param": param, "iid": iid, "p": p, "draws": draws,
                  "value": -1.5, "input": enc(x), "output": enc(y)})


for args in MASKS:
    mask_case(*args)

# Masks wider than their axis (TimeMasking(80) on 40 frames,
# FrequencyMasking(30) on 23 mel bins): starts before the axis, ends
# past it; the draws are exact in float32. p = 0 masks nothing and draws
# nothing.
MASKS_WIDE = [
    ((1, 6, 40), "time", 80, False, 1.0, [0.875, 0.75]),
    ((1, 6, 40), "time", 80, False, 1.0, [0.25, 0.5]),
    ((2, 2, 23, 5), "freq", 30, True, 1.0, [0.125, 0.9375, 0.5, 0.875, 0.5, 0.75, 0.9375, 0.25]),
    ((3, 1, 4, 40), "time", 80, True, 1.0, None),
    ((2, 23, 7), "freq", 30, False, 1.0, [0.9375, 0.125]),
    ((1, 5, 20), "time", 10, False, 0.0, []),
    ((2, 1, 5, 20), "time", 10, True, 0.0, []),
]
for args in MASKS_WIDE:
    mask_case(*args)

# Resample options whose torchaudio values a zero cannot say in Go: a
# Kaiser window of beta 0 (rectangular; zero_beta), a rolloff above 1.
RESAMPLES_MORE = [
    ((2, 90), 16000, 11025, dict(resampling_method="kaiser_window", beta=0.0), True),
    ((1, 77), 3, 2, dict(rolloff=1.25), True),
    ((1, 60), 2, 3, dict(resampling_method="kaiser_window", beta=0.0, rolloff=1.5, lowpass_filter_width=3), False),
]
for shape, orig, new, kw, grad in RESAMPLES_MORE:
    m = T.Resample(orig, new, dtype=torch.float64, **kw)
    method = kw.get("resampling_method", "sinc_interpolation")
    run("resample", torch.randn(*shape), m, grad=grad, orig=orig, new=new,
        width=kw.get("lowpass_filter_width", 0), rolloff=kw.get("rolloff", 0.0),
        method={"sinc_interpolation": "sinc_interp_hann", "kaiser_window": "sinc_interp_kaiser"}[method],
        beta=kw.get("beta", 0.0), zero_beta=kw.get("beta") == 0.0)

# AmplitudeToDB with top_db=0: every value becomes its spectrogram's
# maximum (ZeroTopDB); the gradient goes to each maximum.
for shape, stype in [((2, 3, 4), "power"), ((4, 5), "magnitude")]:
    x = torch.rand(*shape) ** 2
    run("db", x, T.AmplitudeToDB(stype, 0.0), stype=stype, top_db=0.0)

with open(os.path.join(OUT, "goldens.json"), "w") as f:
    json.dump({"cases": cases}, f, separators=(",", ":"))

# ---- WAV fixtures ----
wavs = []


def record(name, note):
    path = os.path.join(OUT, name)
    y, sr = torchaudio.load(path, normalize=True)
    info = torchaudio.info(path)
    wavs.append({"file": name, "note": note, "sample_rate": sr, "encoding": info.encoding,
                 "bits": info.bits_per_sample, "samples": enc(y)})


def pywave(name, width, rate, frames):
    """Writes integer frames (a list of per-frame tuples) with Python's wave."""
    with wave.open(os.path.join(OUT, name), "wb") as w:
        w.setnchannels(len(frames[0]))
        w.setsampwidth(width)
        w.setframerate(rate)
        raw = bytearray()
        for fr in frames:
            for v in fr:
                if width == 1:
                    raw += struct.pack("<B", v)
                elif width == 3:
                    raw += struct.pack("<i", v)[:3]
                else:
                    raw += struct.pack({2: "<h", 4: "<i"}[width], v)
        w.writeframes(bytes(raw))


g = torch.Generator().manual_seed(7)


def ints(lo, hi, n, ch):
    v = torch.randint(lo, hi, (n, ch), generator=g).tolist()
    v[0] = [lo] * ch  # the extremes
    v[1] = [hi - 1] * ch
    return v


pywave("u8_mono.wav", 1, 8000, ints(0, 256, 23, 1))
record("u8_mono.wav", "8-bit unsigned PCM, mono, Python's wave")
pywave("s16_stereo.wav", 2, 16000, ints(-32768, 32768, 17, 2))
record("s16_stereo.wav", "16-bit PCM, stereo, Python's wave")
pywave("s24_mono.wav", 3, 44100, ints(-(1 << 23), 1 << 23, 11, 1))
record("s24_mono.wav", "24-bit PCM, mono, Python's wave")
pywave("s32_stereo.wav", 4, 48000, ints(-(1 << 31), 1 << 31, 9, 2))
record("s32_stereo.wav", "32-bit PCM, stereo, Python's wave")

sig = torch.rand(3, 13, generator=g, dtype=torch.float32) * 2 - 1
for name, encoding, bits, ch in [("f32_stereo.wav", "PCM_F", 32, 2), ("f64_mono.wav", "PCM_F", 64, 1),
                                 ("s24_3ch_ext.wav", "PCM_S", 24, 3), ("s16_3ch_ext.wav", "PCM_S", 16, 3),
                                 ("u8_stereo_sox.wav", "PCM_U", 8, 2)]:
    torchaudio.save(os.path.join(OUT, name), sig[:ch], 22050, encoding=encoding, bits_per_sample=bits)
    record(name, f"{encoding} {bits}-bit, {ch} channels, torchaudio.save (libsox)")

KSDATA = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


def chunk(cid, body):
    pad = b"\x00" if len(body) % 2 else b""
    return cid + struct.pack("<I", len(body)) + body + pad


def riff(chunks):
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


# Extensible IEEE float, 2 channels, with a LIST chunk before and an odd
# chunk after the data.
vals = [0.25, -0.5, 1.0, -1.0, 0.125, 3e-5, -0.75, 0.0]
fmt = struct.pack("<HHIIHHHHI", 0xFFFE, 2, 12000, 12000 * 8, 8, 32, 22, 32, 3) + struct.pack("<H", 3) + KSDATA
data = struct.pack("<8f", *vals)
raw = riff([chunk(b"fmt ", fmt), chunk(b"LIST", b"INFOISFT\x05\x00\x00\x00test\x00\x00"),
            chunk(b"fact", struct.pack("<I", 4)), chunk(b"data", data), chunk(b"junk", b"odd")])
open(os.path.join(OUT, "f32_ext_list.wav"), "wb").write(raw)
record("f32_ext_list.wav", "extensible IEEE float, stereo, a LIST chunk and an odd trailing chunk, by hand")

# 12 valid bits in 16-bit containers (PCM, extensible), mono, and an odd
# chunk before the data.
v12 = [-2048 << 4, 2047 << 4, 100 << 4, -1 << 4, 0]
fmt = struct.pack("<HHIIHHHHI", 0xFFFE, 1, 8000, 16000, 2, 16, 22, 12, 4) + struct.pack("<H", 1) + KSDATA
raw = riff([chunk(b"fmt ", fmt), chunk(b"abcd", b"x"), chunk(b"data", struct.pack("<5h", *v12))])
open(os.path.join(OUT, "s12_ext.wav"), "wb").write(raw)
record("s12_ext.wav", "extensible PCM, 12 valid bits in 16, an odd chunk before the data, by hand")

# libsox's conversions at their edges: floats out of range, below its
# 2^-24 grid and at its rounding points, 32-bit integers near full scale.
EDGES = [1.5, -2.0, 1e-9, 3e-5, 0.1, 1 - 2 ** -25, -1 + 2 ** -25] + \
    [s * (128 * k + h) / 2 ** 31 for s in (1, -1) for k in (1, 2) for h in (63.5, 63.7, 64.3)]
for name, code, bits, packing in [("f32_edges.wav", 3, 32, "f"), ("f64_edges.wav", 3, 64, "d")]:
    fmt = struct.pack("<HHIIHH", code, 1, 8000, 8000 * bits // 8, bits // 8, bits)
    data = struct.pack("<%d%s" % (len(EDGES), packing), *EDGES)
    open(os.path.join(OUT, name), "wb").write(riff([chunk(b"fmt ", fmt), chunk(b"data", data)]))
    record(name, f"{bits}-bit IEEE float at libsox's clipping and rounding edges, by hand")
I32 = [2 ** 31 - 1, 2 ** 31 - 64, 2 ** 31 - 65, -2 ** 31, 63, 64, -64, -65, 12345, -12345]
pywave("s32_edges.wav", 4, 8000, [(v,) for v in I32])
record("s32_edges.wav", "32-bit PCM near full scale and at libsox's rounding points, Python's wave")

# Damaged and inconsistent headers libsox reads (torchaudio.load's values):
# a data chunk that declares more bytes than the file holds (an interrupted
# recording), cut mid-sample, a trailing partial frame, a block align of 0
# or one that disagrees with the channels and bits (libsox derives the
# frame size from those).
V16 = [1000, -2000, 3000, -4000, 5000, -6000, 7000, -8000]
S16 = struct.pack("<8h", *V16)


def pcm_fmt(tag, ch, rate, align, bits):
    return struct.pack("<HHIIHH", tag, ch, rate, rate * align, align, bits)


def write_raw(name, raw, note):
    open(os.path.join(OUT, name), "wb").write(raw)
    record(name, note)


write_raw("damaged_cut_data.wav",
          riff([chunk(b"fmt ", pcm_fmt(1, 1, 8000, 2, 16)), b"data" + struct.pack("<I", 100) + S16]),
          "16-bit mono whose data chunk declares 100 bytes and holds 16, by hand")
write_raw("damaged_cut_sample.wav",
          riff([chunk(b"fmt ", pcm_fmt(1, 1, 8000, 2, 16)), b"data" + struct.pack("<I", 100) + S16 + b"\x01"]),
          "16-bit mono whose data chunk declares 100 bytes and ends mid-sample, by hand")
write_raw("damaged_partial_frame.wav",
          riff([chunk(b"fmt ", pcm_fmt(1, 2, 8000, 4, 16)), chunk(b"data", S16 + b"\x05\x06")]),
          "16-bit stereo with a trailing partial frame, by hand")
write_raw("damaged_cut_stereo24.wav",
          riff([chunk(b"fmt ", pcm_fmt(1, 2, 8000, 6, 24)),
                b"data" + struct.pack("<I", 600) + b"".join(struct.pack("<i", v << 8)[:3] for v in V16[:7])]),
          "24-bit stereo cut one sample into its fourth frame, by hand")
write_raw("align0.wav", riff([chunk(b"fmt ", pcm_fmt(1, 1, 8000, 0, 16)), chunk(b"data", S16)]),
          "16-bit mono with a block align of 0, by hand")
write_raw("align_one_channel.wav", riff([chunk(b"fmt ", pcm_fmt(1, 2, 8000, 2, 16)), chunk(b"data", S16)]),
          "16-bit stereo with the block align of one channel, by hand")
write_raw("align_s24_in_4.wav", riff([chunk(b"fmt ", pcm_fmt(1, 1, 8000, 4, 24)), chunk(b"data", S16)]),
          "24-bit mono with a block align of 4: libsox reads 3-byte samples, by hand")
write_raw("align_u8_in_2.wav", riff([chunk(b"fmt ", pcm_fmt(1, 1, 8000, 2, 8)), chunk(b"data", S16)]),
          "8-bit mono with a block align of 2: libsox reads 1-byte samples, by hand")
write_raw("align_f32_0.wav", riff([chunk(b"fmt ", pcm_fmt(3, 2, 8000, 0, 32) + b"\x00\x00"),
                                   chunk(b"data", struct.pack("<6f", 0.5, -0.25, 0.1, 2.0, -1e-9, 0.75))]),
          "32-bit float stereo with a block align of 0, by hand")

with open(os.path.join(OUT, "wav.json"), "w") as f:
    json.dump({"cases": wavs}, f, indent=0, separators=(",", ":"))
# ---- torchaudio.save's bytes ----
# Every encoding of a signal at libsox's rounding and clipping points
# (halves of each step, NaN, infinities, values beyond ±1, tiny values,
# the top of the float grid) and of uniform noise, and the headers of 1 to
# 9 channels (libsox's speaker masks). saves.json holds the inputs as
# float32 bits (NaN and the infinities have no JSON form) and the bytes
# torchaudio.save wrote, in hex.
saves = []


def f32bits(t):
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in t.reshape(-1).tolist()]


def save_case(name, x, encoding, bits, rate=16000):
    path = os.path.join("/tmp", "goluon_save_%d.wav" % os.getpid())
    torchaudio.save(path, x, rate, encoding=encoding, bits_per_sample=bits)
    raw = open(path, "rb").read()
    os.remove(path)
    saves.append({"name": name, "channels": x.shape[0], "sample_rate": rate, "encoding": "%s%d" % (encoding, bits),
                  "input_bits": f32bits(x), "wav": raw.hex()})


edge = [1.0, -1.0, 1.5, -1.5, float("nan"), float("inf"), float("-inf"), 0.0, -0.0,
        1e-9, -1e-9, 1e-5, 3.3e-4, -3.3e-4, 3e-5, -3e-5, 0.1, -0.1, 1 - 2 ** -25, -1 + 2 ** -25,
        0.999999, -0.999999]
for b in (7, 15, 23):  # halves of the 8-, 16- and 24-bit steps, both signs
    edge += [s * (k + 0.5) / 2 ** b for s in (1, -1) for k in (0, 1, 2, 100)]
gs = torch.Generator().manual_seed(11)
noise = (torch.rand(64, generator=gs, dtype=torch.float64) * 2.2 - 1.1).tolist()
save_sig = torch.tensor([edge + noise], dtype=torch.float32)
for encoding, bits in [("PCM_U", 8), ("PCM_S", 16), ("PCM_S", 24), ("PCM_S", 32), ("PCM_F", 32), ("PCM_F", 64)]:
    save_case("edges", save_sig, encoding, bits)
    save_case("odd", save_sig[:, :3], encoding, bits, rate=11025)
for ch in range(1, 10):
    x = torch.tensor([[0.25 * (c + 1), -0.5 / (c + 1)] for c in range(ch)], dtype=torch.float32)
    save_case("channels", x, "PCM_S", 24, rate=8000)
    save_case("channels", x, "PCM_S", 16, rate=8000)
    save_case("channels", x, "PCM_U", 8, rate=8000)
with open(os.path.join(OUT, "saves.json"), "w") as f:
    json.dump({"cases": saves}, f, indent=0, separators=(",", ":"))

print(len(cases), "goldens,", len(wavs), "wav fixtures,", len(saves), "saves")

# The transforms added later, in transforms.json (imported from this
# directory, leaving no __pycache__ in it).
sys.dont_write_bytecode = True
import make_goldens_transforms  # noqa: E402 (after this script's own goldens)

make_goldens_transforms.main()
