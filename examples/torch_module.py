#!/usr/bin/env python3
"""A PyTorch module compiled by Seam through torchax: seam.torch.compile
takes the module, calls return torch tensors, and the results match eager
PyTorch. Needs torch and torchax (`pip install '.[torch]'`).

  PYTHONPATH=build/python python examples/torch_module.py
"""

import time

import torch

import seam.torch


class MLPBlock(torch.nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def timed(fn, x, repeat=50):
    fn(x)
    start = time.perf_counter()
    for _ in range(repeat):
        fn(x)
    return (time.perf_counter() - start) / repeat


def main():
    torch.manual_seed(0)
    block = MLPBlock().eval()
    x = torch.randn(8, 128, 256)
    compiled = seam.torch.compile(block)
    got = compiled(x)
    with torch.no_grad():
        want = block(x)
        eager = timed(block, x)
    print(f"output {tuple(got.shape)} {got.dtype}; largest difference from eager "
          f"{(got - want).abs().max().item():.2e}")
    print(f"per call: Seam {timed(compiled, x) * 1e3:.3f} ms, eager PyTorch {eager * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
