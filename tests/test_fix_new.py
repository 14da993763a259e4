"""The fixes for hazards that had none (issue 17), each checked with real torch.

Each test lints a small program, applies its fixes through the verifying driver (``fix_text``),
checks the offered rewrite, its safety level and that a second run changes nothing, then runs
the fixed program and its reference under torch and compares every module-level tensor and
gradient. The reference is the out-of-place twin of the marked lines where that means the
same thing; for a leaf written in place (IPL003) it is the program written as its author
meant it, under ``no_grad``, since the twin rebinds a name and leaves the parameter alone.
A safe fix is also applied to a program that runs correctly, which must compute the same.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from pathlib import Path

import pytest
from harness import Outcome, compare, parse_markers, run_example

from inplace_lint.autofix import apply_edits, fix_text
from inplace_lint.engine import lint_source

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 1e-6


@functools.cache
def run(source: str) -> Outcome:
    """Each distinct program runs once in this module."""
    return run_example(source, "<fix-new>")


@functools.cache
def twin(source: str) -> str:
    from inplace_lint.dynamic.twin import out_of_place_twin

    return out_of_place_twin(source, lines={line for line, _ in parse_markers(source)})


def fixed(source: str, *, unsafe: bool) -> str:
    """``source`` fixed whole: something applied, nothing left, a second run a no-op."""
    result = fix_text(source, "m.py", unsafe=unsafe)
    assert result.applied, source
    assert result.remaining == [], [(f.code, f.line) for f in result.remaining]
    again = fix_text(result.after, "m.py", unsafe=unsafe)
    assert again.after == result.after
    return result.after


def offered(source: str) -> list[tuple[str, str, bool]]:
    """``(code, description, safe)`` of every finding's fix."""
    return [(f.code, f.fix.description, f.fix.safe) for f in lint_source(source, "m.py") if f.fix]


def same_values(fixed_source: str, reference: str) -> None:
    after, expected = run(fixed_source), run(reference)
    assert after.ok, after.error
    assert expected.ok, expected.error
    difference = compare(after, expected)
    assert difference is not None and difference <= TOLERANCE, difference


def dedent(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


# --------------------------------------------------------------------------- IPL003

LAYER_SCALE = dedent(
    """
    import torch
    from torch import nn


    class LayerScale(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.gamma = nn.Parameter(torch.empty(dim))
            self.gamma.fill_(0.1)  # <-- IPL003

        def forward(self, x):
            return x * self.gamma


    torch.manual_seed(0)
    {build}
    x = torch.randn(2, 4)
    y = block(x).sum()
    y.backward()
    grad = block.gamma.grad
    """
)


def test_leaf_write_in_init_becomes_nn_init_and_is_safe() -> None:
    source = LAYER_SCALE.format(build="block = LayerScale(4)")
    assert offered(source) == [
        ("IPL003", "Use `nn.init.constant_()`, which writes under no_grad", True)
    ]
    assert not run(source).ok  # the leaf error
    after = fixed(source, unsafe=False)
    assert "nn.init.constant_(self.gamma, 0.1)" in after
    meant = source.replace(
        "self.gamma.fill_(0.1)", "with torch.no_grad():\n            self.gamma.fill_(0.1)"
    )
    same_values(after, meant)


def test_safe_leaf_fix_keeps_a_program_that_runs() -> None:
    """Built under a caller's no_grad, the original runs; the safe fix changes nothing."""
    source = LAYER_SCALE.format(build="with torch.no_grad():\n    block = LayerScale(4)")
    assert [safe for code, _, safe in offered(source) if code == "IPL003"] == [True]
    assert run(source).ok
    same_values(fixed(source, unsafe=False), source)


def test_nn_init_is_not_spelled_through_a_shadowed_name() -> None:
    """``def __init__(self, dim, nn=None)`` hides the module's ``nn``: the safe no_grad form."""
    source = LAYER_SCALE.format(build="block = LayerScale(4)")
    shadowed = source.replace("def __init__(self, dim):", "def __init__(self, dim, init=None):")
    shadowed = shadowed.replace(
        "from torch import nn", "from torch import nn\nfrom torch.nn import init"
    )
    assert offered(shadowed) == [("IPL003", "Wrap the write in `with torch.no_grad():`", True)]
    plain = shadowed.replace(", init=None", "")
    assert offered(plain) == [
        ("IPL003", "Use `init.constant_()`, which writes under no_grad", True)
    ]


def test_leaf_write_elsewhere_is_wrapped_in_no_grad_unsafely() -> None:
    source = dedent(
        """
        import torch
        x = torch.randn(16, 3)
        y = x @ torch.tensor([[1.5], [-2.0], [0.5]])
        w = torch.zeros(3, 1, requires_grad=True)
        loss = (x @ w - y).pow(2).mean()
        loss.backward()
        w -= 0.1 * w.grad  # <-- IPL003
        """
    )
    assert offered(source) == [("IPL003", "Wrap the write in `with torch.no_grad():`", False)]
    assert fix_text(source, "m.py").applied == []  # not with --fix alone
    after = fixed(source, unsafe=True)
    assert "with torch.no_grad():\n    w -= 0.1 * w.grad" in after
    same_values(after, twin(source))


def test_a_differentiable_leaf_update_goes_out_of_place() -> None:
    """MAML's inner step reads a ``create_graph=True`` gradient: ``no_grad`` would make it first
    order, so the write is rebound out of place, even though a grad call differentiates the name
    (each iteration's call sees the tensor its loss was computed from)."""
    source = dedent(
        """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 1, requires_grad=True)
        xs, ys = torch.randn(6, 3), torch.randn(6, 1)
        fast = w
        for _ in range(2):
            support = ((xs @ fast - ys) ** 2).mean()
            (g,) = torch.autograd.grad(support, fast, create_graph=True)
            fast.sub_(0.1 * g)  # <-- IPL003
        query = ((xs @ fast - ys) ** 2).mean()
        query.backward()
        meta = w.grad
        """
    )
    assert [(c, s) for c, _, s in offered(source)] == [("IPL003", False)]
    after = fixed(source, unsafe=True)
    assert "fast = fast.sub(0.1 * g)" in after
    same_values(after, twin(source))
    # a grad call after the write still forbids the rebinding (tests/test_fix.py checks it)


# --------------------------------------------------------------------------- IPL007

SIGMOID = dedent(
    """
    import torch
    a = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
    h = torch.sigmoid(a)
    {write}  # <-- IPL007
    h.sum().backward()
    grad = a.grad
    """
)


@pytest.mark.parametrize(
    ("write", "after"),
    [
        ("h.data.mul_(2.0)", "h = h.mul(2.0)"),
        ("h.detach().clamp_(0.2, 0.6)", "h = h.clamp(0.2, 0.6)"),
        ("h.data *= 0.5", "h = h * 0.5"),
        ("h.data[0] = 0.25", "h = h.clone()\nh[0] = 0.25"),
    ],
)
def test_data_write_goes_out_of_place_unsafely(write: str, after: str) -> None:
    source = SIGMOID.format(write=write)
    assert [(code, safe) for code, _, safe in offered(source)] == [("IPL007", False)]
    result = fixed(source, unsafe=True)
    assert after + "  # <-- IPL007" in result
    reference = twin(source)
    if "[0]" in write:  # the twin keeps ``.data`` in an item write: write it out of place
        reference = source.replace(write, "h = torch.where(torch.arange(3) == 0, 0.25, h)")
    same_values(result, reference)


def test_no_data_fix_where_rebinding_drops_the_write() -> None:
    """A loop over parameters, or a name bound to a parameter: rebinding would change nothing."""
    for setup, write in (
        ("for p in fc.parameters():\n    ", "p.data.clamp_(-0.1, 0.1)"),
        ("w = fc.weight\n", "w.data.mul_(0.5)"),
    ):
        source = dedent(
            """
            import torch
            fc = torch.nn.Linear(3, 2)
            out = fc(torch.randn(4, 3))
            {setup}{write}
            out.sum().backward()
            """
        ).format(setup=setup, write=write)
        found = lint_source(source, "m.py")
        assert [f.code for f in found] == ["IPL007"] and found[0].fix is None, source


# --------------------------------------------------------------------------- optimizer step

GAN = dedent(
    """
    import torch
    from torch import nn
    torch.manual_seed(0)
    G, D = nn.Linear(2, 2), nn.Linear(2, 1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    z = torch.randn(4, 2)
    fake = G(z)
    d_fake = D(fake)
    d_loss = d_fake.mean()
    g_loss = -d_fake.mean()
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()  # <-- IPL001
    {between}opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    g_weight = G.weight.detach().clone()
    """
)


def test_optimizer_step_moves_after_the_last_backward() -> None:
    source = GAN.format(between="")
    assert offered(source) == [
        ("IPL001", "Move `opt_d.step()` after the backward on line 16", False)
    ]
    assert not run(source).ok
    after = fixed(source, unsafe=True)
    assert "g_loss.backward()\nopt_d.step()  # <-- IPL001\nopt_g.step()" in after
    reference = dedent(
        """
        import torch
        from torch import nn
        torch.manual_seed(0)
        G, D = nn.Linear(2, 2), nn.Linear(2, 1)
        z = torch.randn(4, 2)
        fake = G(z)
        g_loss = -D(fake).mean()
        (gw,) = torch.autograd.grad(g_loss, G.weight)
        g_weight = (G.weight - 0.1 * gw).detach()
        """
    )
    same_values(after, reference)


def test_no_move_when_the_optimizer_is_used_in_between() -> None:
    source = GAN.format(between="opt_d.zero_grad()\n")
    found = [f for f in lint_source(source, "m.py") if f.code == "IPL001"]
    assert found and all(f.fix is None for f in found)


# --------------------------------------------------------------------------- IPL004, IPL005

HELPER = dedent(
    """
    import torch


    def rotate(x, angle):
        \"\"\"Rotate pairs of features.\"\"\"
        rotated = torch.stack([x[:, 1], -x[:, 0]], dim=1) * angle
        x.copy_(rotated)  # <-- IPL004
        return x


    keys = torch.randn(3, 2)
    out = rotate(keys, 0.5)
    total = keys + out
    """
)


def test_argument_is_cloned_at_the_top_of_the_function() -> None:
    assert offered(HELPER) == [("IPL004", "Clone argument `x` at the top of `rotate()`", False)]
    after = fixed(HELPER, unsafe=True)
    assert '"""Rotate pairs of features."""\n    x = x.clone()\n    rotated' in after
    same_values(after, twin(HELPER))


def test_argument_written_through_a_view_is_cloned_at_the_top() -> None:
    source = dedent(
        """
        import torch


        def floor_first(x):
            x[:, 0].clamp_(min=0.0)  # <-- IPL004
            return x.sum(dim=1)


        feats = torch.randn(4, 3)
        rows = floor_first(feats)
        total = feats.sum() + rows.sum()
        """
    )
    assert offered(source) == [
        ("IPL004", "Clone argument `x` at the top of `floor_first()`", False)
    ]
    after = fixed(source, unsafe=True)
    assert "def floor_first(x):\n    x = x.clone()\n" in after
    same_values(after, twin(source))


def test_no_top_clone_for_an_optional_argument() -> None:
    source = HELPER.replace("def rotate(x, angle)", "def rotate(x=None, angle=1.0)")
    found = lint_source(source, "m.py")
    assert [f.code for f in found] == ["IPL004"] and found[0].fix is None


FORWARD = dedent(
    """
    import torch


    class ClampInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.clamp_(min=0)  # <-- IPL005
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2


    a = torch.randn(5, requires_grad=True)
    b = a * 1
    y = ClampInput.apply(b)
    total = (y + b).sum()
    total.backward()
    """
)


def test_forward_input_is_cloned_before_the_write() -> None:
    assert offered(FORWARD) == [
        ("IPL005", "Clone input `x` before writing to it in forward", False)
    ]
    after = fixed(FORWARD, unsafe=True)
    assert "x = x.clone()\n        x.clamp_(min=0)" in after
    same_values(after, twin(FORWARD))


# --------------------------------------------------------------------------- elements, grad calls


def test_list_element_chain_is_stored_out_of_place() -> None:
    source = dedent(
        """
        import torch
        a = torch.randn(2, 6, requires_grad=True)
        feats = []
        x = a
        for _ in range(2):
            x = torch.sigmoid(x * 1.5)
            feats.append(x)
        feats[0].mul_(0.5).add_(0.1)  # <-- IPL001
        total = sum(f.sum() for f in feats)
        total.backward()
        grad = a.grad
        """
    )
    assert [(c, s) for c, _, s in offered(source)] == [("IPL001", False)]
    after = fixed(source, unsafe=True)
    assert "feats[0] = feats[0].mul(0.5).add(0.1)" in after
    same_values(after, twin(source))


def test_tensor_item_chain_is_not_an_element_fix() -> None:
    source = dedent(
        """
        import torch
        a = torch.randn(2, 6, requires_grad=True)
        h = torch.sigmoid(a)
        h[0].mul_(0.5)
        h.sum().backward()
        """
    )
    for finding in lint_source(source, "m.py"):
        assert finding.fix is None or "h[0] = " not in finding.fix.edits[0].text


def test_inplace_op_inside_a_grad_call() -> None:
    source = dedent(
        """
        import torch
        import torch.nn.functional as F
        torch.manual_seed(0)
        h = torch.nn.Linear(4, 6)(torch.randn(3, 4))
        (dh,) = torch.autograd.grad(F.relu_(h).sum(), h)  # <-- IPL006
        """
    )
    assert [(c, s) for c, _, s in offered(source)] == [("IPL006", False)]
    after = fixed(source, unsafe=True)
    assert "torch.autograd.grad(F.relu(h).sum(), h)" in after
    same_values(after, twin(source))


def test_sequential_first_element_loses_its_flag() -> None:
    source = dedent(
        """
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 4))

            def forward(self, x):
                identity = x
                out = self.body(x)  # <-- IPL002
                return identity + out


        torch.manual_seed(0)
        block = Block()
        y = block(nn.Linear(4, 4)(torch.randn(2, 4))).sum()
        y.backward()
        grad = block.body[1].weight.grad
        """
    )
    assert [(c, s) for c, _, s in offered(source)] == [("IPL002", False)]
    after = fixed(source, unsafe=True)
    assert "nn.Sequential(nn.ReLU(), nn.Linear(4, 4))" in after
    same_values(after, twin(source))


# --------------------------------------------------------------------------- every case


def test_every_offered_fix_parses_alone() -> None:
    """Each fix on the hazard cases of the codes that gained one, applied alone, parses."""
    count = 0
    for folder in ("ipl003", "ipl004", "ipl005", "ipl007"):
        for path in sorted((ROOT / "tests" / "cases" / folder).glob("*.py")):
            source = path.read_text(encoding="utf-8")
            if not source.startswith("# label: hazard"):
                continue
            for finding in lint_source(source, str(path)):
                if finding.fix is not None:
                    ast.parse(apply_edits(source, finding.fix.edits))
                    count += 1
    assert count >= 80


# --------------------------------------------------------------------------- out=


def test_out_argument_already_bound_is_dropped() -> None:
    """``h = torch.mul(h, 2.0, out=h)``: binding the call is the plain form, safe for a fresh
    local (torch refuses ``out=`` on a tensor that requires grad, so no correct run changes)."""
    source = dedent(
        """
        import torch
        a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = torch.sigmoid(a)
        h = torch.mul(h, 2.0, out=h)  # <-- IPL001
        {tail}
        """
    )
    hazard = source.format(tail="h.sum().backward()\ngrad = a.grad")
    assert offered(hazard) == [("IPL001", "Drop `out=h`: the call is bound to it already", True)]
    after = fixed(hazard, unsafe=False)
    assert "h = torch.mul(h, 2.0)  # <-- IPL001" in after
    same_values(after, twin(hazard))


def test_write_through_a_view_goes_into_a_clone() -> None:
    """``w.diagonal().zero_()`` on a fresh local: ``w = w.clone()`` first, safe; a program that
    runs (no backward reaches the write) keeps its values."""
    source = dedent(
        """
        import torch
        a = torch.randn(3, 3, requires_grad=True)
        w = torch.exp(a)
        w.diagonal().zero_()  # <-- IPL001
        {tail}
        """
    )
    hazard = source.format(tail="w.sum().backward()\ngrad = a.grad")
    assert [(c, s) for c, _, s in offered(hazard)] == [("IPL001", True)]
    after = fixed(hazard, unsafe=False)
    assert "w = w.clone()\nw.diagonal().zero_()" in after
    same_values(after, twin(hazard))
    runs = dedent(
        """
        import torch


        def head(a, zero):
            w = torch.exp(a)
            if zero:
                w.diagonal().zero_()
            return w * 2


        a = torch.randn(3, 3, requires_grad=True)
        head(a, False).sum().backward()
        grad = a.grad
        """
    )
    assert [(c, s) for c, _, s in offered(runs)] == [("IPL001", True)]
    assert run(runs).ok
    same_values(fixed(runs, unsafe=False), runs)


SEQUENTIAL = dedent(
    """
    import torch
    from torch import nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5, inplace=True))  # <-- IPL001
    m.{mode}()
    x = torch.randn(3, 4)
    m(x).pow(2).sum().backward()
    grad = m[0].weight.grad
    """
)


def test_inplace_dropout_after_an_activation_that_returns_a_new_tensor_is_safe() -> None:
    """``nn.ReLU()`` hands the dropout a tensor nothing else holds: dropping ``inplace`` is
    safe; in eval mode (dropout writes nothing) the fixed model computes the same."""
    hazard = SEQUENTIAL.format(mode="train")
    assert offered(hazard) == [("IPL001", "Use `Dropout()` without `inplace=True`", True)]
    assert not run(hazard).ok
    after = fixed(hazard, unsafe=False)
    assert "nn.Dropout(0.5))  # <-- IPL001" in after
    same_values(after, twin(hazard))
    runs = SEQUENTIAL.format(mode="eval")
    assert run(runs).ok
    same_values(fixed(runs, unsafe=False), runs)
    shared = hazard.replace("nn.ReLU()", "nn.ReLU(inplace=True)")
    assert all(not safe for _, text, safe in offered(shared) if "Dropout" in text)


# ------------------------------------------------------------- list elements (IPL001)

LATERALS = dedent(
    """
    import torch

    torch.manual_seed(0)
    x = torch.randn(2, 3, requires_grad=True)
    laterals = [torch.sigmoid(x * s) for s in (1.0, 2.0)]
    laterals.append(torch.sigmoid(x))
    for i in range(2, 0, -1):
        laterals[i - 1] += laterals[i]  # <-- IPL001
    loss = sum(t.sum() for t in laterals)
    loss.backward()
    grad = x.grad
    """
)


def test_a_list_element_is_stored_out_of_place_not_cloned() -> None:
    assert offered(LATERALS) == [
        ("IPL001", "Store `laterals[i - 1]` out of place instead of writing into it", False)
    ]
    assert not run(LATERALS).ok  # sigmoid's saved output changed
    after = fixed(LATERALS, unsafe=True)
    assert "laterals[i - 1] = laterals[i - 1] + laterals[i]" in after
    assert ".clone()" not in after
    same_values(after, twin(LATERALS))


MAKE = "def make(x):\n    return [torch.sigmoid(x * s) for s in (1.0, 2.0)]\n\n\n"


def test_a_list_from_elsewhere_gets_no_clone() -> None:
    """The list comes from a helper: not provably a list to the fixer, but its ``append``
    shows it is one, so no ``laterals = laterals.clone()`` is offered."""
    source = LATERALS.replace(
        "laterals = [torch.sigmoid(x * s) for s in (1.0, 2.0)]", "laterals = make(x)"
    ).replace("torch.manual_seed(0)\n", "torch.manual_seed(0)\n\n\n" + MAKE)
    found = [f for f in lint_source(source, "m.py") if f.code == "IPL001"]
    assert found
    edits = [e for f in found if f.fix is not None for e in f.fix.edits]
    assert all(".clone()" not in e.text for e in edits)
