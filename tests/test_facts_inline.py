"""What a same-file helper returns is computed with the caller's own values.

A helper's result carries the saves its body makes on what the caller passed: the losses
``compute_losses(gen, disc, x)`` returns went through ``disc``, the tensor ``head(x)``
returns is ``tanh``'s saved output. The caller's later in-place write (an optimizer step, an
``add_``) breaks them. Every program here was run with torch: the hazards raise, the
look-alikes do not.
"""

from __future__ import annotations

import textwrap

import pytest
from programs import behave, codes, run

GAN = """
import torch
from torch import nn


def compute_losses(gen, disc, z, real):
    fake = gen(z)
    d_loss = disc(real).mean() - disc(fake.detach()).mean()
    {g_loss}
    return g_loss, d_loss


gen = nn.Linear(2, 3)
disc = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
g_loss, d_loss = compute_losses(gen, disc, torch.randn(5, 2), torch.randn(5, 3))
opt_d.zero_grad()
d_loss.backward()
{order}
"""

STEP_FIRST = "opt_d.step()\ng_loss.backward()\nopt_g.step()"
STEP_LAST = "g_loss.backward()\nopt_d.step()\nopt_g.step()"

HEAD = """
import torch
from torch import nn


def head(x, w):
    return torch.tanh(x @ w)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def squash(self, h):
        return h.sigmoid()

    def forward(self, x):
        out = {call}
        {write}
        return out


w = torch.randn(3, 3, requires_grad=True)
Net()(torch.randn(2, 3)).sum().backward()
"""


#: the generator's loss, computed at once or accumulated into a fresh tensor
G_LOSS = [
    "g_loss = -disc(fake).mean()",
    "g_loss = torch.zeros(())\n    g_loss += -disc(fake).mean()",
]


def _gan(order: str, g_loss: str = G_LOSS[0]) -> str:
    return textwrap.dedent(GAN).format(order=order, g_loss=g_loss)


def _head(call: str, write: str) -> str:
    return textwrap.dedent(HEAD).format(call=call, write=write)


@pytest.mark.parametrize("g_loss", G_LOSS, ids=["computed", "accumulated"])
def test_a_step_between_two_backwards_through_a_helpers_losses(g_loss: str) -> None:
    source = _gan(STEP_FIRST, g_loss)
    step = source.splitlines().index("opt_d.step()") + 1
    assert codes(source) == [(step, "IPL001")]


@pytest.mark.parametrize("g_loss", G_LOSS, ids=["computed", "accumulated"])
def test_the_step_after_the_last_backward_is_quiet(g_loss: str) -> None:
    assert codes(_gan(STEP_LAST, g_loss)) == []


@pytest.mark.parametrize(
    "call", ["head(self.lin(x), w)", "self.squash(self.lin(x))"], ids=["function", "method"]
)
def test_writing_the_saved_output_a_helper_returns(call: str) -> None:
    assert codes(_head(call, "out.add_(1)")) == [(20, "IPL001")]


@pytest.mark.parametrize(
    ("call", "write"),
    [
        ("head(self.lin(x), w)", "out = out + 1"),  # out of place
        ("self.squash(self.lin(x)).clone()", "out.add_(1)"),  # a copy of the saved output
    ],
)
def test_look_alikes_stay_quiet(call: str, write: str) -> None:
    assert codes(_head(call, write)) == []


def test_the_programs_behave_as_labelled() -> None:
    for g_loss in G_LOSS:
        behave(_gan(STEP_FIRST, g_loss), _gan(STEP_LAST, g_loss))
    behave(_head("head(self.lin(x), w)", "out.add_(1)"), _head("head(x, w)", "out = out + 1"))
    behave(
        _head("self.squash(self.lin(x))", "out.add_(1)"),
        _head("self.squash(self.lin(x)).clone()", "out.add_(1)"),
    )


def test_recursive_and_mutually_recursive_helpers_end() -> None:
    source = textwrap.dedent(
        """
        import torch


        def down(x, n):
            return x if n == 0 else up(x.exp(), n - 1)


        def up(x, n):
            return down(x.sigmoid(), n)


        w = torch.ones(2, requires_grad=True)
        y = down(w * 2, 3)
        y.sum().backward()
        """
    )
    assert codes(source) == []


SHADOW = """
import torch


def scale(x):
    x[x < 0] = 0
    return x.sum()


class Scale:
    def __call__(self, x):
        return scale(x.clone())


def run(img):
    {binding}
    total = scale(img[None, :])
    return img * total


img = torch.tensor([1.0, -2.0, 3.0, -4.0])
kept = img.clone()
out = run(img)
"""


def test_a_local_name_shadows_the_files_function_of_that_name() -> None:
    """``scale = Scale()`` makes ``scale(img)`` the instance's call, which writes a copy."""
    shadowed = textwrap.dedent(SHADOW).format(binding="scale = Scale()")
    plain = textwrap.dedent(SHADOW).format(binding="pass")
    assert codes(shadowed) == []
    assert [code for _, code in codes(plain)] == ["IPL004"]
    for source, changed in ((shadowed, False), (plain, True)):
        scope = run(source)
        assert bool((scope["img"] != scope["kept"]).any()) is changed  # type: ignore[operator]


FILL = """
import torch


def _select(tensor, dims, indices):
    for dim, index in zip(dims, indices):
        tensor = tensor.select(dim, index)
    return tensor


def contract(parts):
    result = torch.empty(2, 3)
    for i, part in enumerate(parts):
        {write}
    return result


out = contract([torch.ones(3), torch.zeros(3)])
"""


@pytest.mark.parametrize(
    "write", ["_select(result, [0], [i]).copy_(part)", "_select(result, [0], [i])[:] = part"]
)
def test_filling_a_buffer_through_the_view_a_helper_returns(write: str) -> None:
    """The helper hands out a view of ``result`` to be written: reading ``result`` after
    the fill wants the new values (as after ``result[i].copy_(part)``)."""
    source = FILL.replace("{write}", write)
    assert codes(source) == []
    scope = run(source)
    assert scope["out"].tolist() == [[1.0] * 3, [0.0] * 3]  # type: ignore[attr-defined]


POSITIONS = """
import torch

_INT, _MASK = 0, 1


def read(element):
    if isinstance(element, int):
        return _INT, 1, element
    if element.dtype == torch.bool:
        element = element.clone()
    return _MASK, element.ndim, {returned}


def dims_of(index):
    dims = []
    dim = 0
    for element in index:
        kind, num_dims, element = read(element)
        if kind == _INT:
            dims.append((dim, element))
            dim += 1
        else:
            dim += num_dims
    return dims


w = torch.randn(3, requires_grad=True)
kind, num_dims, out = read(w * 2)
out.mul_(2)
out.sum().backward()
dims = dims_of([1, w > 0])
"""


def test_each_position_of_a_helpers_tuples_keeps_its_own_values() -> None:
    """``kind, num_dims, element = read(element)``, where ``read`` returns several 3-tuples
    whose last position is one of two values: ``num_dims`` is the int of the middle position,
    so ``dim += 1`` rebinds an int (no stale read of ``dims``), while ``out`` is still the
    helper's tensor (``sigmoid`` saved it: the write raises)."""
    assert codes(POSITIONS.format(returned="element")) == []
    hazard = POSITIONS.format(returned="element.sigmoid()")
    assert codes(hazard) == [(30, "IPL001")]
    behave(hazard, POSITIONS.format(returned="element"))


MASKS = """
import torch
from torch import nn


def init_masks(feats):
    masks = {}
    for key, feat in feats.items():
        masks[key] = nn.Parameter(torch.randn(1, feat.size(1)) * 0.1)
    return masks, len(masks)


feats = {"a": torch.randn(2, 3)}
masks, count = init_masks(feats)
loss = sum((feats[k] * m.sigmoid()).sum() for k, m in masks.items())
loss.backward()
for key in masks:
    masks[key] = masks[key].detach().sigmoid()
"""


def test_a_returned_dict_stays_a_dict_at_its_position() -> None:
    """``masks, count = init_masks(feats)``: ``masks`` is the dict the helper built, so
    ``masks[key] = ...`` replaces an entry; no leaf of it is written (dgl's GNNExplainer)."""
    assert codes(MASKS) == []
    run(MASKS)


NESTED = """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)

    def forward(self, query, ref):
        return ref * 2, self.q(query)


class Decoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pointer = Attention(dim)
        self.cell = nn.LSTMCell(dim, dim)

    def logits_of(self, x, h):
        hy, cy = self.cell(x, h)
        _, logits = self.pointer(hy, x)
        return logits, (hy, cy)

    def step(self, x, h, mask):
        logits, h = self.logits_of(x, h)
        log_p = torch.log_softmax(logits, dim=1)
        log_p[mask] = float("-inf")
        return log_p


x = torch.randn(2, 4)
log_p = Decoder(4).step(x, (torch.zeros(2, 4), torch.zeros(2, 4)), x > 0)
log_p.masked_fill(log_p.isinf(), 0).sum().backward()
"""


def test_a_modules_tuple_elements_need_grad_when_it_has_parameters() -> None:
    """``_, logits = self.pointer(...)`` two helpers deep, where the forward is not interpreted
    again: each element of a module with parameters needs grad, so ``log_softmax`` keeps
    ``log_p`` and the masked write breaks backward (rl4co's pointer network, run 9)."""
    write = NESTED.splitlines().index('        log_p[mask] = float("-inf")') + 1
    assert codes(NESTED) == [(write, "IPL001")]
    behave(NESTED)
