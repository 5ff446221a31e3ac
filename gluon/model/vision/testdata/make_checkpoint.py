#!/usr/bin/python3
"""Writes alexnet_checkpoint.pth: the AlexNet fixture's state dict
(alexnet.safetensors, converted with tools/torch2safetensors.py) inside a
training checkpoint as PyTorch's checkpoint tutorial saves one, for the
test that LoadStateDict reads torch.save files directly.

Run from this directory: /usr/bin/python3 make_checkpoint.py
"""
import os
import subprocess
import tempfile

import torch

tool = os.path.join(os.path.dirname(__file__) or '.', '..', '..', '..', '..', 'tools', 'torch2safetensors.py')
with tempfile.TemporaryDirectory() as d:
    plain = os.path.join(d, 'alexnet.pth')
    subprocess.run(['/usr/bin/python3', tool, '--to-torch', 'alexnet.safetensors', plain], check=True)
    sd = torch.load(plain)
torch.save({'epoch': 12, 'model_state_dict': sd, 'loss': 0.25}, 'alexnet_checkpoint.pth')
