#!/usr/bin/python3
"""Writes the .npy and .npz fixtures of nd/npy's tests with NumPy, and
manifest.json describing what each holds.

Run from this directory: /usr/bin/python3 make_fixtures.py
(Debian's python3-numpy; the Go tests never run Python.)
"""
import json
import math

import numpy as np

manifest = []


def values(a):
    """The elements in C order as strings: exact for every dtype."""
    flat = np.ascontiguousarray(a).reshape(-1)
    if a.dtype.kind == 'c':
        flat = np.stack([flat.real, flat.imag], axis=-1).reshape(-1)
    out = []
    for v in flat.tolist():
        if isinstance(v, float):
            out.append('nan' if math.isnan(v) else repr(v))
        else:
            out.append(str(int(v)))
    return out


def save(name, a, nd_dtype, version=None, identical=False, error=None):
    path = name + '.npy'
    with open(path, 'wb') as f:
        if version is None:
            np.save(f, a, allow_pickle=(a.dtype.kind == 'O'))
        else:
            np.lib.format.write_array(f, a, version=version, allow_pickle=False)
    entry = {'file': path, 'identical': identical}
    if error:
        entry['error'] = error
    else:
        shape = list(a.shape) + ([2] if a.dtype.kind == 'c' else [])
        entry.update({'dtype': nd_dtype, 'shape': shape})
        if a.dtype.kind == 'f' and a.dtype.itemsize == 2:
            entry['bits'] = [int(b) for b in np.ascontiguousarray(a).reshape(-1).view('<u2')]
        else:
            entry['values'] = values(a)
    manifest.append(entry)


save('f4', (np.arange(6, dtype='<f4').reshape(2, 3) * 0.5 - 1), 'float32', identical=True)
save('f8', np.array([math.pi, -1e300, 5e-324, -0.0, np.inf], dtype='<f8'), 'float64', identical=True)
save('f8_big', (np.arange(5, dtype='>f8') / 3), 'float64')
save('f2', np.array([0, 1, -2, 65504, 6e-8, np.inf, -np.inf, np.nan], dtype='<f2'), 'float16', identical=True)
save('i1', np.array([-128, -1, 0, 127], dtype='|i1'), 'int64')
save('i2_big', np.array([-32768, 32767, -2], dtype='>i2'), 'int64')
save('i4', np.array([[-2**31, 2**31 - 1], [0, -7]], dtype='<i4'), 'int32', identical=True)
save('i8', np.array([-2**63, 2**63 - 1, 0], dtype='<i8'), 'int64', identical=True)
save('u1', np.arange(250, 256, dtype='|u1').reshape(3, 2), 'uint8', identical=True)
save('u2', np.array([0, 65535], dtype='<u2'), 'int64')
save('u4_big', np.array([0, 2**32 - 1], dtype='>u4'), 'int64')
save('u8', np.array([0, 2**63 - 1], dtype='<u8'), 'int64')
save('u8_over', np.array([2**64 - 1], dtype='<u8'), None, error='above the largest int64')
save('b1', np.array([True, False, True, True], dtype='|b1').reshape(2, 1, 2), 'bool', identical=True)
save('fortran', np.asfortranarray(np.arange(24, dtype='<f8').reshape(2, 3, 4)), 'float64')
save('fortran_big_c16', np.asfortranarray(np.array([[1 + 2j, 3 - 4j, 0.5j], [-1, 2.25, 1e-3 + 1e3j]], dtype='>c16')), 'float64')
save('c8', np.array([1 + 2j, -3.5 + 0.25j], dtype='<c8'), 'float32')
save('scalar', np.array(3.5, dtype='<f4'), 'float32', identical=True)
save('empty', np.zeros((0, 3), dtype='<f4'), 'float32', identical=True)
save('v2', np.arange(4, dtype='<i8'), 'int64', version=(2, 0))
save('v3', np.arange(3, dtype='<f4'), 'float32', version=(3, 0))
save('object', np.array([1, 'a', None], dtype=object), None, error='Python objects')
save('unicode', np.array(['ab', 'c'], dtype='<U2'), None, error='no array form')
save('datetime', np.array(['2026-11-29'], dtype='datetime64[D]'), None, error='no array form')
save('structured', np.zeros(2, dtype=[('x', '<f4'), ('y', '<i4')]), None, error='structured')

a = np.arange(6, dtype='<f4').reshape(3, 2)
b = np.array([1, -2], dtype='<i8')
np.savez('stored.npz', weight=a, bias=b)
np.savez_compressed('compressed.npz', weight=a, bias=b)
manifest.append({'npz': 'stored.npz', 'arrays': {'weight': values(a), 'bias': values(b)}})
manifest.append({'npz': 'compressed.npz', 'arrays': {'weight': values(a), 'bias': values(b)}})

with open('manifest.json', 'w') as f:
    json.dump(manifest, f, indent=1)
    f.write('\n')
