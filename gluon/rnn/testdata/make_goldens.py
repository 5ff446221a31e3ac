#!/usr/bin/python3
"""Writes goldens.json and lstm_state_dict.safetensors for gluon/rnn's tests.

Run from the repository root with Debian's python3-torch:

    /usr/bin/python3 gluon/rnn/testdata/make_goldens.py

Every case builds a torch recurrent layer or cell in float64 with a fixed
seed, runs it on random inputs (and begin states where the case has
them), then backpropagates random head gradients through every output.
The JSON holds the parameters under PyTorch's state_dict names, the
inputs, the heads, the outputs and the gradients of the inputs and of
every parameter. The Go test replays each case without Python.

lstm_state_dict.safetensors is the float32 state_dict of a module with a
child "lstm" (2 layers, bidirectional, batch_first) and a child "proj"
(Linear), and lstm_state_dict.json an input and that module's output, so
the Go test can load a real torch state_dict by name.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testdata"))
from lenet_interop import write_safetensors  # noqa: E402


def tensor(t):
    t = t.detach().to(torch.float64).contiguous()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


LAYERS = {"rnn_tanh": torch.nn.RNN, "rnn_relu": torch.nn.RNN,
          "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}
CELLS = {"rnn_tanh": torch.nn.RNNCell, "lstm": torch.nn.LSTMCell,
         "gru": torch.nn.GRUCell}


def layer_case(name, mode, inp, hidden, layers, bidir, batch_first, T, N, begin, lengths=None):
    g = torch.Generator().manual_seed(len(name) * 7919 + T * 31 + N)
    torch.manual_seed(len(name) * 104729 + hidden)
    kw = dict(num_layers=layers, bidirectional=bidir, batch_first=batch_first)
    if mode.startswith("rnn"):
        kw["nonlinearity"] = mode[4:]
    m = LAYERS[mode](inp, hidden, **kw).double()
    D = 2 if bidir else 1
    xs = (N, T, inp) if batch_first else (T, N, inp)
    x = torch.randn(*xs, generator=g, dtype=torch.float64, requires_grad=True)
    inputs = {"x": x}
    states = []
    if begin:
        for s in (["h0", "c0"] if mode == "lstm" else ["h0"]):
            inputs[s] = torch.randn(layers * D, N, hidden, generator=g,
                                    dtype=torch.float64, requires_grad=True)
            states.append(inputs[s])
    run = x
    if lengths is not None:  # a padded batch, packed as pack_padded_sequence does
        run = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first,
                                                      enforce_sorted=False)
    if mode == "lstm":
        out, (hn, cn) = m(run, tuple(states) if states else None)
        rest = [hn, cn]
    else:
        out, hn = m(run, states[0] if states else None)
        rest = [hn]
    if lengths is not None:
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first, total_length=T)
    outs = [out] + rest
    return finish(name, mode, "layer", m, inputs, outs, g, dict(
        input=inp, hidden=hidden, layers=layers, bidirectional=bidir,
        batch_first=batch_first, lengths=lengths or []))


def cell_case(name, mode, inp, hidden, N, begin):
    g = torch.Generator().manual_seed(len(name) * 7919 + N)
    torch.manual_seed(len(name) * 104729 + hidden)
    m = CELLS[mode](inp, hidden).double()
    x = torch.randn(N, inp, generator=g, dtype=torch.float64, requires_grad=True)
    inputs = {"x": x}
    if begin:
        for s in (["h", "c"] if mode == "lstm" else ["h"]):
            inputs[s] = torch.randn(N, hidden, generator=g, dtype=torch.float64,
                                    requires_grad=True)
    st = [inputs[s] for s in ("h", "c") if s in inputs]
    if mode == "lstm":
        outs = list(m(x, tuple(st) if st else None))
    else:
        outs = [m(x, st[0] if st else None)]
    return finish(name, mode, "cell", m, inputs, outs, g, dict(input=inp, hidden=hidden))


def finish(name, mode, kind, m, inputs, outs, g, cfg):
    heads = [torch.randn(*o.shape, generator=g, dtype=torch.float64) for o in outs]
    params = {k: tensor(v) for k, v in m.state_dict().items()}
    torch.autograd.backward(outs, heads)
    grads = {k: tensor(v.grad) for k, v in inputs.items()}
    grads.update({k: tensor(p.grad) for k, p in m.named_parameters()})
    return dict(name=name, mode=mode, kind=kind, config=cfg, params=params,
                inputs={k: tensor(v) for k, v in inputs.items()},
                heads=[tensor(h) for h in heads],
                outputs=[tensor(o) for o in outs], grads=grads)


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(5, 7, num_layers=2, bidirectional=True, batch_first=True)
        self.proj = torch.nn.Linear(14, 3)

    def forward(self, x):
        return self.proj(self.lstm(x)[0])


def main():
    cases = [
        layer_case("lstm/1-layer-begin", "lstm", 4, 6, 1, False, False, 5, 3, True),
        layer_case("lstm/2-layer-bidir-ntc", "lstm", 3, 5, 2, True, True, 4, 2, False),
        layer_case("lstm/3-layer-begin-ntc", "lstm", 2, 3, 3, False, True, 3, 2, True),
        layer_case("gru/2-layer-bidir-begin", "gru", 4, 5, 2, True, False, 4, 3, True),
        layer_case("gru/1-layer", "gru", 3, 4, 1, False, True, 6, 2, False),
        layer_case("rnn_tanh/1-layer-begin", "rnn_tanh", 3, 4, 1, False, False, 5, 2, True),
        layer_case("rnn_relu/2-layer-bidir-ntc", "rnn_relu", 3, 4, 2, True, True, 3, 2, True),
        layer_case("lstm/lengths-bidir-begin", "lstm", 3, 4, 2, True, False, 5, 3, True, [5, 2, 3]),
        layer_case("gru/lengths-ntc", "gru", 3, 4, 1, False, True, 4, 3, False, [1, 4, 2]),
        layer_case("rnn_tanh/lengths-bidir-ntc-begin", "rnn_tanh", 2, 3, 1, True, True, 4, 2, True, [3, 4]),
        cell_case("lstm_cell/begin", "lstm", 4, 5, 3, True),
        cell_case("lstm_cell/zero", "lstm", 3, 2, 2, False),
        cell_case("gru_cell/begin", "gru", 4, 3, 2, True),
        cell_case("rnn_cell/begin", "rnn_tanh", 2, 3, 3, True),
    ]
    with open(os.path.join(HERE, "goldens.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)

    torch.manual_seed(7)
    net = Tagger()
    write_safetensors(os.path.join(HERE, "lstm_state_dict.safetensors"), net.state_dict())
    x = torch.randn(2, 6, 5)
    with torch.no_grad():
        y = net(x)
    with open(os.path.join(HERE, "lstm_state_dict.json"), "w") as f:
        json.dump({"input": tensor(x), "output": tensor(y)}, f)
    print(f"{len(cases)} cases, torch {torch.__version__}")


if __name__ == "__main__":
    main()
