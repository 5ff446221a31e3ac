#!/usr/bin/python3
"""Writes the torch.save fixtures of gluon/pytorch's tests and
expected.json, the tensors LoadStateDict must read from each (dotted
names, nd dtype, shape, elements as exact strings).

Run from this directory: /usr/bin/python3 make_fixtures.py
(Debian's python3-torch; the Go tests never run Python.)
"""
import collections
import io
import json
import math
import pickle
import zipfile

import torch

torch.manual_seed(0)
expected = {}

ND = {torch.float32: 'float32', torch.float64: 'float64', torch.float16: 'float16',
      torch.bfloat16: 'bfloat16', torch.int32: 'int32', torch.int64: 'int64',
      torch.int16: 'int64', torch.int8: 'int64', torch.uint8: 'uint8', torch.bool: 'bool',
      torch.complex64: 'float32', torch.complex128: 'float64'}


def elements(t):
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    out = []
    for v in t.reshape(-1).tolist():
        if isinstance(v, float):
            out.append('nan' if math.isnan(v) else repr(v))
        else:
            out.append(str(int(v)))
    return out


def flatten(prefix, v, out):
    if isinstance(v, torch.Tensor):
        shape = list(v.shape) + ([2] if v.is_complex() else [])
        out[prefix] = {'dtype': ND[v.dtype], 'shape': shape, 'values': elements(v)}
    elif isinstance(v, dict):
        for k, x in v.items():
            flatten(f'{prefix}.{k}' if prefix else str(k), x, out)
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            flatten(f'{prefix}.{i}' if prefix else str(i), x, out)


def save(name, value, **kw):
    torch.save(value, name, **kw)
    out = {}
    flatten('', value, out)
    expected[name] = out


model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                            torch.nn.Linear(4, 5))
model(torch.randn(2, 3, 3, 3))  # running statistics move, num_batches_tracked is 1
model.register_buffer('scratch', torch.zeros(2), persistent=False)  # not in the state dict
save('state_dict.pt', model.state_dict())
torch.save(model, 'module.pt')  # the whole module: LoadStateDict rebuilds its state dict
torch.save({'epoch': 7, 'state_dict': model.state_dict()}, 'wrapped.pt')

opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model(torch.randn(2, 3, 3, 3)).sum().backward()
opt.step()
save('checkpoint.pt', {'model': model.state_dict(), 'optimizer': opt.state_dict(), 'epoch': 3,
                       'best': 0.75, 'name': 'run', 'betas': (0.9, 0.999), 'dtype': torch.float16,
                       'huge': 2**70, 'none': None})

x = torch.linspace(-3, 3, 7)
save('dtypes.pt', {
    'f16': x.half(), 'bf16': x.bfloat16(), 'f64': x.double() / 3, 'i8': torch.tensor([-128, 0, 127], dtype=torch.int8),
    'i16': torch.tensor([-32768, 32767], dtype=torch.int16), 'i32': torch.tensor([-2**31, 5], dtype=torch.int32),
    'i64': torch.tensor([-2**63, 2**63 - 1]), 'u8': torch.tensor([0, 255], dtype=torch.uint8),
    'bool': torch.tensor([True, False]), 'c64': torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64),
    'c128': torch.tensor([[1e300 - 1j]], dtype=torch.complex128), 'scalar': torch.tensor(2.5),
    'empty': torch.zeros(0, 3), 'param': torch.nn.Parameter(torch.tensor([1.0, 2.0])),
})

base = torch.arange(24.).reshape(4, 6)
save('views.pt', {'base': base, 'transposed': base.t(), 'slice': base[1:3, ::2], 'same': base,
                  'expanded': torch.tensor([1., 2.]).expand(3, 2), 'row': base[2]})

class Config(dict):
    """A config dict of the kind training scripts save (EasyDict-like)."""


class History(list):
    """A list subclass."""


# Subclasses of dict and list around and inside a checkpoint: read as
# Objects holding their entries; the state dict is still found.
torch.save({'state_dict': model.state_dict(), 'hist': collections.defaultdict(list, {'loss': [1.0, 0.5]}),
            'cfg': Config(lr=0.1, layers=[1, 2]), 'runs': History([1, 2])}, 'subclasses.pt')
torch.save(Config(model.state_dict()), 'state_dict_in_subclass.pt')

torch.save(model.state_dict(), 'legacy.pt', _use_new_zipfile_serialization=False)
torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), 'script.pt')

# A big-endian archive: the same tensors, storages byte-swapped and a
# byteorder member saying so, as PyTorch 2 writes on big-endian hosts
# (torch 1.13 here neither writes nor reads that member, so the check is
# that Go reads it as the little-endian dtypes.pt).
src = zipfile.ZipFile('dtypes.pt')
elsize = {}  # storage key: bytes a swapped word


class Keys(pickle.Unpickler):
    """Reads the pickle only for its storages' keys and classes."""

    def find_class(self, module, name):
        if module == 'torch' and name.endswith('Storage'):
            return getattr(torch, name)
        return lambda *args, **kw: None

    def persistent_load(self, pid):
        cls, key = pid[1], pid[2]
        size = torch.empty(0, dtype=cls.dtype).element_size()
        elsize[key] = size // 2 if cls.dtype.is_complex else size


Keys(io.BytesIO(src.read('dtypes/data.pkl'))).load()
with zipfile.ZipFile('big_endian.pt', 'w', zipfile.ZIP_STORED) as dst:
    for info in src.infolist():
        data = src.read(info.filename)
        if info.filename.startswith('dtypes/data/'):
            n = elsize[info.filename.split('/')[-1]]
            data = b''.join(data[i:i + n][::-1] for i in range(0, len(data), n))
        dst.writestr(info.filename, data)
    dst.writestr('dtypes/byteorder', b'big')
expected['big_endian.pt'] = expected['dtypes.pt']

with open('expected.json', 'w') as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write('\n')
