#!/usr/bin/python3
"""Goldens for gluon/model/text's tests of the further BERT heads.

The heads are written out in plain torch (Debian's python3-torch; the
transformers package is not needed) on make_bert_goldens.py's BertModel
transcription, computing what these transformers models compute in eval
mode, with the losses they compute when given labels:

  - BertForTokenClassification: BertModel without pooler, the classifier
    (nn.Linear(hidden, num_labels)) on every token; loss the
    cross-entropy over the labels that are not -100;
  - BertForQuestionAnswering: BertModel without pooler, qa_outputs
    (nn.Linear(hidden, 2)) on every token split into start and end
    logits; loss (CE(start) + CE(end)) / 2 with the positions clamped to
    [0, T] and T ignored (ignore_index = T), as transformers clamps them;
  - BertForPreTraining: BertModel with pooler, cls.predictions (the
    masked-LM head, its decoder tied to the word embedding) on every
    token and cls.seq_relationship (nn.Linear(hidden, 2)) on the pooled
    output; loss the masked-LM cross-entropy (-100 ignored) plus the
    next-sentence cross-entropy;
  - BertForNextSentencePrediction: cls.seq_relationship alone, its loss
    the cross-entropy;
  - BertForMultipleChoice: ids, token types and mask [B, C, T] flattened
    to [B*C, T], BertModel with pooler, classifier (nn.Linear(hidden, 1))
    on the pooled output, the logits viewed as [B, C]; loss the
    cross-entropy.

The encoder and the pre-training heads are those of the committed
fixture bert_tiny.safetensors (made by make_bert_goldens.py), read back
here; the new heads' weights (classifier for token classification,
qa_outputs, the multiple-choice classifier) are seeded random float32
values written into the goldens under transformers' state-dict names, so
that the tests build each model's state dict from the fixture and them.
Everything is computed in float64 from the float32 values and written
with all its digits (repr), so that a float64 model is checked tightly.

Run from the repository root:
    /usr/bin/python3 gluon/model/text/testdata/make_bert_heads_goldens.py
It writes gluon/model/text/testdata/bert_heads_goldens.json.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))
sys.path.insert(0, HERE)
from torch2safetensors import read_safetensors  # noqa: E402
from make_bert_goldens import CFG, bert, linear, mlm_logits  # noqa: E402

F = torch.nn.functional


def enc(t):
    """A tensor as the tests read it, every float64 digit kept (repr)."""
    t = t.detach().double()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def fixture_weights():
    """bert_tiny.safetensors under BertForPreTraining's current names (weight/bias), without the tied copies."""
    out = {}
    for k, v in read_safetensors(os.path.join(HERE, "bert_tiny.safetensors")).items():
        if k in ("bert.embeddings.position_ids", "cls.predictions.decoder.weight", "cls.predictions.decoder.bias"):
            continue
        k = k.replace(".LayerNorm.gamma", ".LayerNorm.weight").replace(".LayerNorm.beta", ".LayerNorm.bias")
        out[k] = v
    return out


def head_weights(seed):
    """The new heads' float32 weights, by model, under transformers' names."""
    g = torch.Generator().manual_seed(seed)
    h = CFG["hidden_size"]

    def rnd(*shape, std):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * std).float()

    return {
        "token_classification": {"classifier.weight": rnd(CFG["num_labels"], h, std=0.3),
                                 "classifier.bias": rnd(CFG["num_labels"], std=0.05)},
        "question_answering": {"qa_outputs.weight": rnd(2, h, std=0.3), "qa_outputs.bias": rnd(2, std=0.05)},
        "multiple_choice": {"classifier.weight": rnd(1, h, std=0.3), "classifier.bias": rnd(1, std=0.05)},
    }


def grads_of(loss, w, names):
    return {n: enc(gr) for n, gr in zip(names, torch.autograd.grad(loss, [w[n] for n in names], retain_graph=True))}


def qa_loss(start, end, start_positions, end_positions):
    """BertForQuestionAnswering's loss, as transformers computes it."""
    ignored = start.size(1)
    sp, ep = start_positions.clamp(0, ignored), end_positions.clamp(0, ignored)
    return (F.cross_entropy(start, sp, ignore_index=ignored) + F.cross_entropy(end, ep, ignore_index=ignored)) / 2


def main():
    base = fixture_weights()
    heads = head_weights(20240613)
    w = {k: v.double().requires_grad_() for k, v in base.items()}
    ids = torch.tensor([[2, 17, 45, 3, 88, 9, 61, 33, 3, 70],
                        [2, 54, 12, 96, 3, 41, 3, 0, 0, 0]])
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
                          [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]])
    mask = torch.tensor([[1] * 10, [1] * 7 + [0] * 3])
    out = {"config": CFG, "ids": ids.tolist(), "token_types": types.tolist(), "mask": mask.tolist(),
           "heads": {m: {k: enc(v) for k, v in hw.items()} for m, hw in heads.items()}}

    # Token classification (no pooler).
    tw = dict(w, **{k: v.double().requires_grad_() for k, v in heads["token_classification"].items()})
    seq, _ = bert(tw, CFG, ids, types, mask, pool=False)
    logits = linear(tw, "classifier", seq)
    labels = torch.tensor([[-100, 0, 2, 1, 1, 0, 2, 2, 1, -100],
                           [-100, 1, 1, 0, 2, 0, -100, -100, -100, -100]])
    loss = F.cross_entropy(logits.reshape(-1, CFG["num_labels"]), labels.reshape(-1))
    out["token_classification"] = {
        "labels": labels.tolist(), "logits": enc(logits), "loss": float(loss),
        "grads": grads_of(loss, tw, ["classifier.weight", "bert.encoder.layer.1.output.LayerNorm.weight",
                                     "bert.encoder.layer.0.attention.self.value.bias"]),
    }

    # Question answering (no pooler).
    qw = dict(w, **{k: v.double().requires_grad_() for k, v in heads["question_answering"].items()})
    seq, _ = bert(qw, CFG, ids, types, mask, pool=False)
    start, end = linear(qw, "qa_outputs", seq).split(1, dim=-1)
    start, end = start.squeeze(-1), end.squeeze(-1)
    cases = []
    # positions inside; beyond T (clamped to T: ignored); negative (clamped to 0)
    for sp, ep in [([3, 2], [5, 4]), ([1, 12], [-3, 5]), ([10, 4], [0, 11])]:
        sp_t, ep_t = torch.tensor(sp), torch.tensor(ep)
        cases.append({"start_positions": sp, "end_positions": ep, "loss": float(qa_loss(start, end, sp_t, ep_t))})
    loss = qa_loss(start, end, torch.tensor([1, 12]), torch.tensor([-3, 5]))
    out["question_answering"] = {
        "start_logits": enc(start), "end_logits": enc(end), "losses": cases,
        "grads": grads_of(loss, qw, ["qa_outputs.weight", "bert.encoder.layer.0.attention.self.key.bias"]),
    }

    # Pre-training: masked LM and next sentence.
    seq, pooled = bert(w, CFG, ids, types, mask)
    pred = mlm_logits(w, CFG, seq)
    rel = linear(w, "cls.seq_relationship", pooled)
    mlm_labels = torch.full((2, 10), -100)
    for b, t in [(0, 1), (0, 4), (0, 7), (1, 2), (1, 5)]:
        mlm_labels[b, t] = ids[b, t]
    nsp_labels = torch.tensor([1, 0])
    mlm = F.cross_entropy(pred.reshape(-1, CFG["vocab_size"]), mlm_labels.reshape(-1))
    nsp = F.cross_entropy(rel.reshape(-1, 2), nsp_labels.reshape(-1))
    loss = mlm + nsp
    out["pretraining"] = {
        "mlm_labels": mlm_labels.tolist(), "nsp_labels": nsp_labels.tolist(),
        "prediction_logits": enc(pred), "seq_relationship_logits": enc(rel),
        "loss": float(loss), "nsp_loss": float(nsp),
        "grads": grads_of(loss, w, ["cls.predictions.bias", "cls.seq_relationship.weight", "bert.pooler.dense.bias",
                                    "cls.predictions.transform.LayerNorm.weight"]),
        "nsp_grads": grads_of(nsp, w, ["cls.seq_relationship.weight", "bert.pooler.dense.bias"]),
    }

    # Multiple choice: 2 questions with 3 choices of 8 tokens.
    mw = dict(w, **{k: v.double().requires_grad_() for k, v in heads["multiple_choice"].items()})
    g = torch.Generator().manual_seed(5)
    b, c, t = 2, 3, 8
    mc_ids = torch.randint(4, CFG["vocab_size"], (b, c, t), generator=g)
    mc_ids[:, :, 0] = 2  # [CLS]
    mc_types = torch.zeros(b, c, t, dtype=torch.int64)
    mc_types[:, :, 4:] = 1
    mc_mask = torch.ones(b, c, t, dtype=torch.int64)
    for i, j, n in [(0, 1, 2), (1, 0, 3), (1, 2, 1)]:  # some choices padded at the end
        mc_mask[i, j, t - n:] = 0
        mc_ids[i, j, t - n:] = 0
    _, pooled = bert(mw, CFG, mc_ids.reshape(-1, t), mc_types.reshape(-1, t), mc_mask.reshape(-1, t))
    mc_logits = linear(mw, "classifier", pooled).reshape(-1, c)
    mc_labels = torch.tensor([2, 0])
    loss = F.cross_entropy(mc_logits, mc_labels)
    out["multiple_choice"] = {
        "ids": mc_ids.tolist(), "token_types": mc_types.tolist(), "mask": mc_mask.tolist(),
        "labels": mc_labels.tolist(), "logits": enc(mc_logits), "loss": float(loss),
        "grads": grads_of(loss, mw, ["classifier.weight", "bert.embeddings.token_type_embeddings.weight",
                                     "bert.encoder.layer.1.attention.output.dense.bias"]),
    }

    with open(os.path.join(HERE, "bert_heads_goldens.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("token classification loss %.6f, QA loss %.6f, pre-training loss %.6f (NSP %.6f), multiple choice %.6f" % (
        out["token_classification"]["loss"], cases[1]["loss"], out["pretraining"]["loss"], out["pretraining"]["nsp_loss"],
        out["multiple_choice"]["loss"]))


if __name__ == "__main__":
    main()
