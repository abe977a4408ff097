"""seam.torch.compile against PyTorch eager: a module (linear layers,
layer norm, GELU, softmax attention) and a plain function give eager's
results within f32 tolerance, parameters changed between calls are seen,
and tensors come back as tensors. Skipped without torch and torchax (the
optional extra `pip install '.[torch]'`)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchax")
import seam.torch  # noqa: E402


class Block(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.transpose(-1, -2) / 32 ** 0.5, dim=-1) @ v
        x = x + attn
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


def test_a_module_matches_eager():
    torch.manual_seed(0)
    block = Block().eval()
    x = torch.randn(2, 16, 32)
    compiled = seam.torch.compile(block)
    got = compiled(x)
    assert isinstance(got, torch.Tensor) and got.shape == (2, 16, 32)
    with torch.no_grad():
        want = block(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_parameters_are_read_on_every_call():
    torch.manual_seed(1)
    linear = torch.nn.Linear(8, 4)
    compiled = seam.torch.compile(linear)
    x = torch.randn(3, 8)
    compiled(x)
    with torch.no_grad():
        linear.weight.mul_(2)
        want = linear(x)
    np.testing.assert_allclose(compiled(x).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_a_function_of_tensors():
    def f(a, b):
        return torch.tanh(a) * b.sum(dim=0), (a - b).abs().max()

    a, b = torch.randn(5, 7), torch.randn(5, 7)
    got = seam.torch.compile(f)(a, b)
    want = f(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
