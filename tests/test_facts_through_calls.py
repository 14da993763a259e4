"""Facts that travel through calls: a helper's argument writes seen by the caller's caller,
a parameter a torch module took as input, and what a custom Function's forward saved.

Every program is run with torch: the hazards raise or change results, the look-alikes run
and agree with their out-of-place versions.
"""

from __future__ import annotations

import pytest
from programs import behave, codes, run

PLANNER = """
import torch


def normalize(e):
    {write}
    return e


class Planner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 1)

    def forward(self, batch):
        return self.fc(normalize(batch["ego"]))


torch.manual_seed(0)
model = Planner()
batch = {{"ego": torch.randn(4, 2) + 10.0}}
outs = []
for seed in range(2):
    outs.append(model(batch))
"""
IN_PLACE = "e[:, 0] /= 33.0"
OUT_OF_PLACE = "e = e.clone()\n    e[:, 0] /= 33.0"


def test_a_write_two_calls_down_is_the_callers_callers() -> None:
    """``forward`` passes its argument's entry to a helper that writes it: the loop that
    calls the model again with the same batch reads the written values."""
    source = PLANNER.format(write=IN_PLACE)
    line = source.splitlines().index(f"    {IN_PLACE}") + 1
    assert codes(source) == [(line, "IPL004")]
    assert codes(PLANNER.format(write=OUT_OF_PLACE)) == []


def test_the_planner_programs_behave_as_labelled() -> None:
    torch = pytest.importorskip("torch")
    hazard = run(PLANNER.format(write=IN_PLACE))["outs"]
    safe = run(PLANNER.format(write=OUT_OF_PLACE))["outs"]
    assert not torch.equal(hazard[0], hazard[1])  # type: ignore[index]
    assert torch.equal(safe[0], safe[1])  # type: ignore[index]


ENCODER = """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_conv = nn.Sequential(nn.Conv1d(4, 4, 3, padding=1), nn.GELU())

    def forward(self, x):
        return self.features(x)

    def features(self, x):
        x_conv = self.pos_conv(x.transpose(1, 2)).transpose(1, 2)
        {add}
        return x


encoder = Encoder()
h = torch.randn(2, 5, 4, requires_grad=True) * 1.0
encoder(h).sum().backward()
"""


def test_a_parameter_a_torch_module_took_is_a_tensor() -> None:
    """``x += x_conv`` in a helper method whose ``x`` went (transposed) through a
    convolution: a write to the convolution's saved input, not a rebinding."""
    source = ENCODER.format(add="x += x_conv")
    line = source.splitlines().index("        x += x_conv") + 1
    assert codes(source) == [(line, "IPL001")]
    assert codes(ENCODER.format(add="x = x + x_conv")) == []
    behave(source, ENCODER.format(add="x = x + x_conv"))


SOFTMAX_CE = """
import torch


class SoftmaxCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target):
        probs = torch.softmax(logits, dim=-1)
        ctx.save_for_backward({saved}, target)
        return {returned}

    @staticmethod
    def backward(ctx, grad):
        probs, target = ctx.saved_tensors
        probs[torch.arange(target.shape[0]), target] -= 1.0
        probs.mul_(grad)
        return probs, None


logits = torch.randn(3, 5, requires_grad=True)
target = torch.tensor([0, 2, 4])
loss = SoftmaxCE.apply(logits, target)
{backward}
"""
LOSS = "-probs.gather(1, target[:, None]).log().sum()"
ONCE = "loss.backward()"
TWICE = "loss.backward(retain_graph=True)\nloss.backward()"


def _writes(source: str) -> list[int]:
    lines = source.splitlines()
    first = lines.index("        probs[torch.arange(target.shape[0]), target] -= 1.0") + 1
    return [first, lines.index("        probs.mul_(grad)") + 1]


def test_a_saved_tensor_forward_made_for_backward_alone() -> None:
    """Megatron's cross-entropy turns the softmax it saved into the input gradient: nobody
    else holds it, unless a second backward runs over the retained graph."""
    once = SOFTMAX_CE.format(saved="probs", returned=LOSS, backward=ONCE)
    assert codes(once) == []
    twice = SOFTMAX_CE.format(saved="probs", returned=LOSS, backward=TWICE)
    assert codes(twice) == [(line, "IPL005") for line in _writes(twice)]
    behave(twice, once)


def test_a_saved_tensor_forward_returned_or_was_given() -> None:
    """The output forward returned, or its input: the caller holds it too."""
    returned = SOFTMAX_CE.format(
        saved="probs", returned="probs", backward="kept = loss.clone()\nloss.sum().backward()"
    )
    assert codes(returned) == [(line, "IPL005") for line in _writes(returned)]
    given = SOFTMAX_CE.format(
        saved="logits", returned=LOSS, backward="kept = logits.clone()\n" + ONCE
    )
    assert codes(given) == [(line, "IPL005") for line in _writes(given)]
    torch = pytest.importorskip("torch")
    for source, name in ((returned, "loss"), (given, "logits")):
        scope = run(source)  # backward changed the caller's tensor
        assert not torch.equal(scope[name], scope["kept"])  # type: ignore[arg-type]


KERNEL = """
import torch


class Kernel:
    @staticmethod
    def backward(grad, probs):
        dot = (grad * probs).sum(dim=-1, keepdim=True)
        {write}
        return grad


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        probs = torch.softmax(x, dim=-1)
        ctx.save_for_backward(probs)
        return probs

    @staticmethod
    def backward(ctx, grad_output):
        probs = ctx.saved_tensors[0]
        return Kernel.backward(grad_output, probs)


torch.manual_seed(0)
x = torch.randn(2, 3, requires_grad=True)
g = torch.randn(2, 3)
kept = g.clone()
Softmax.apply(x).backward(g)
"""
IN_PLACE_KERNEL = "grad.sub_(dot).mul_(probs)"
OUT_OF_PLACE_KERNEL = "grad = (grad - dot) * probs"


def test_a_helper_called_on_its_class_writes_grad_output() -> None:
    """``Kernel.backward(grad_output, probs)``: a static method of a same-file class (not a
    tensor's ``backward``) that writes the gradient it was given, which the caller holds."""
    source = KERNEL.format(write=IN_PLACE_KERNEL)
    line = source.splitlines().index(f"        {IN_PLACE_KERNEL}") + 1
    assert codes(source) == [(line, "IPL005")]
    assert codes(KERNEL.format(write=OUT_OF_PLACE_KERNEL)) == []
    torch = pytest.importorskip("torch")
    hazard = run(source)
    assert not torch.equal(hazard["g"], hazard["kept"])  # type: ignore[arg-type]
    safe = run(KERNEL.format(write=OUT_OF_PLACE_KERNEL))
    assert torch.equal(safe["g"], safe["kept"])  # type: ignore[arg-type]
    assert torch.allclose(hazard["x"].grad, safe["x"].grad)  # type: ignore[union-attr]


GAN = """
import torch
import torch.nn as nn


def losses(d, g, x):
    fake = d(g(torch.randn(4, 2)))
    d_loss = (d(x) - fake).mean()
    g_loss = -fake.mean()
    return d_loss, g_loss


def train(g, d, x, loss_fn, g_opt, d_opt):
    d_loss, g_loss = loss_fn(d, g, x)
    d_opt.zero_grad()
    d_loss.backward(retain_graph=True)
    {first}
    g_opt.zero_grad()
    g_loss.backward()
    {second}


torch.manual_seed(0)
g = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
d = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
g_opt = torch.optim.SGD(g.parameters(), lr=0.1)
d_opt = torch.optim.SGD(d.parameters(), lr=0.1)
train(g, d, torch.randn(4, 3), losses, g_opt, d_opt)
"""


def test_a_function_and_optimizers_every_caller_passes() -> None:
    """``train(g, d, x, losses, g_opt, d_opt)``: ``loss_fn`` is ``losses``, and ``d_opt``
    updates the parameters of the ``d`` passed beside it, so its step between the two
    backward passes through ``d``'s forward is found."""
    hazard = GAN.format(first="d_opt.step()", second="g_opt.step()")
    line = hazard.splitlines().index("    d_opt.step()") + 1
    assert codes(hazard) == [(line, "IPL001")]
    safe = GAN.format(first="pass", second="d_opt.step()\n    g_opt.step()")
    assert codes(safe) == []
    behave(hazard, safe)


DETECT = """
import torch
import torch.nn as nn


class Decode(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 1)
        self.inplace = inplace

    def forward(self, x):
        y = self.conv(x).sigmoid()
        if self.inplace:
            y[:, 0:2] = y[:, 0:2] * 2 - 0.5
        else:
            y = torch.cat((y[:, 0:2] * 2 - 0.5, y[:, 2:]), 1)
        return y


torch.manual_seed(0)
model = Decode({given})
model(torch.rand(1, 3, 4, 4)).sum().backward()
"""


def test_a_flag_every_construction_gives() -> None:
    """``if self.inplace:`` where ``__init__`` stores its parameter once and every
    construction gives False (by default): only the out-of-place arm runs."""
    hazard = DETECT.format(given="inplace=True")
    line = hazard.splitlines().index("            y[:, 0:2] = y[:, 0:2] * 2 - 0.5") + 1
    assert codes(hazard) == [(line, "IPL001")]
    assert codes(DETECT.format(given="")) == []
    assert codes(DETECT.format(given="inplace=False")) == []
    behave(hazard, DETECT.format(given=""))


CHAINED = """
import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Linear(3, 2)
gen = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
dis = nn.Linear(3, 1)
opt = torch.optim.SGD(itertools.chain(enc.parameters(), gen.parameters()), lr=0.1)
fake = gen(enc(torch.randn(4, 3)))
g_loss = -dis(fake).mean()
g_loss.backward(retain_graph=True)
{step}
d_loss = dis(fake).mean()
d_loss.backward()
"""


def test_an_optimizer_over_chained_parameters() -> None:
    """``SGD(itertools.chain(enc.parameters(), gen.parameters()))`` updates both modules."""
    hazard = CHAINED.format(step="opt.step()")
    line = hazard.splitlines().index("opt.step()") + 1
    assert codes(hazard) == [(line, "IPL001")]
    assert codes(CHAINED.format(step="pass")) == []
    behave(hazard, CHAINED.format(step="pass"))


REBOUND = """
import torch


def center(t):
    {rebind}
    t.sub_(t.mean())
    return t * 2


torch.manual_seed(0)
x = torch.randn(5)
kept = x.clone()
y = center(x)
z = x + 1
"""


@pytest.mark.parametrize(
    ("rebind", "hazard"),
    [
        ("if isinstance(t, list):\n        t = torch.stack(t)", True),  # not on this path
        (
            "if t.dim() > 1:\n        t = t.flatten().clone()\n    else:\n        t = t.clone()",
            False,
        ),
        ("t = t.clone()", False),
        ("for _ in range(len(t) - 5):\n        t = t.clone()", True),  # runs no time here
    ],
)
def test_a_parameter_rebound_on_some_paths(rebind: str, hazard: bool) -> None:
    """A rebinding inside one arm of a branch, or in a loop body, holds only on that path:
    the write after it may still reach the caller's tensor. Rebound in every arm, it does
    not."""
    source = REBOUND.format(rebind=rebind)
    line = source.splitlines().index("    t.sub_(t.mean())") + 1
    assert codes(source) == ([(line, "IPL004")] if hazard else [])
    torch = pytest.importorskip("torch")
    scope = run(source)
    assert torch.equal(scope["x"], scope["kept"]) is not hazard  # type: ignore[arg-type]


GUARDED = """
import torch


def suppress(scores, exact=True):
    if exact:
        keep = scores > 0.5
    else:
        scores[scores < 0.5] = 0
        keep = scores > 0
    return keep


torch.manual_seed(0)
scores = torch.rand(6)
kept = scores.clone()
keep = suppress(scores{given})
total = scores.sum()
"""


@pytest.mark.parametrize(("given", "hazard"), [("", False), (", exact=False", True)])
def test_a_write_in_the_arm_a_flag_argument_rules_out(given: str, hazard: bool) -> None:
    """``else:`` of ``if exact:`` writes only when the call gives ``exact`` False; the
    default True rules it out."""
    source = GUARDED.format(given=given)
    line = source.splitlines().index("        scores[scores < 0.5] = 0") + 1
    assert codes(source) == ([(line, "IPL004")] if hazard else [])
    torch = pytest.importorskip("torch")
    scope = run(source)
    assert torch.equal(scope["scores"], scope["kept"]) is not hazard  # type: ignore[arg-type]


LOGGED = """
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)


def step(x):
    logs = {empty}
    loss = (w * x).sum()
    logs["adv"] = loss.detach(){copy}
    loss += (w ** 2).sum()
    loss.backward()
    return logs


out = step(torch.randn(3))
"""


@pytest.mark.parametrize("empty", ["{}", "dict()"])
def test_a_logged_detach_alias_in_an_empty_dict(empty: str) -> None:
    """``logs["adv"] = loss.detach()`` shares ``loss``'s storage: the later ``loss +=`` is
    what the returned dict shows (``dict()`` is an empty dict like ``{}``)."""
    hazard = LOGGED.format(empty=empty, copy="")
    line = hazard.splitlines().index("    loss += (w ** 2).sum()") + 1
    assert codes(hazard) == [(line, "IPL002")]
    safe = LOGGED.format(empty=empty, copy=".clone()")
    assert codes(safe) == []
    torch = pytest.importorskip("torch")
    assert not torch.equal(run(hazard)["out"]["adv"], run(safe)["out"]["adv"])  # type: ignore[index]


FILLED = """
import torch
import torch.nn as nn

torch.manual_seed(0)
head = nn.Linear(4, 6)
h = head(torch.randn(3, 4))
buf = h.new_zeros(3, 6)
buf[:, :3] = h[:, :3]
out = torch.log_softmax(buf, dim=-1)
{add}
out.sum().backward()
"""


def test_a_buffer_written_with_values_that_require_grad() -> None:
    """``h.new_zeros(...)`` requires no grad, but once written with ``h``'s values it does:
    log_softmax then saves its output, which the in-place add overwrites."""
    hazard = FILLED.format(add="out.add_(1.0)")
    line = hazard.splitlines().index("out.add_(1.0)") + 1
    assert codes(hazard) == [(line, "IPL001")]
    assert codes(FILLED.format(add="out = out + 1.0")) == []
    behave(hazard, FILLED.format(add="out = out + 1.0"))


COPIED_BACK = """
import torch


def snap(v):
    v[v.abs().argmax()] = 1.0
    return v


torch.manual_seed(0)
state = torch.randn(4)
{line}
total = state.sum()
"""


def test_a_helper_result_copied_back_into_the_name_it_was_given() -> None:
    """``state.copy_(snap(state))``: the name holds the copy afterwards, so reading it wants
    the new value; bound to another name, the helper's write is still a surprise."""
    assert codes(COPIED_BACK.format(line="state.copy_(snap(state))")) == []
    source = COPIED_BACK.format(line="snapped = snap(state)")
    line = source.splitlines().index("    v[v.abs().argmax()] = 1.0") + 1
    assert codes(source) == [(line, "IPL004")]


STARRED = """
import torch


def passthrough(t):
    return t, t.shape, None


torch.manual_seed(0)
x = torch.randn(3)
kept = x.clone()
a, *_ = {call}
a += 1
total = x.sum()
"""


def test_a_starred_unpacking_takes_the_leading_positions() -> None:
    """``a, *_ = passthrough(x)``: ``a`` is the helper's first position, ``x`` itself, so
    ``a += 1`` changes what ``x`` reads; from a clone it does not."""
    source = STARRED.format(call="passthrough(x)")
    line = source.splitlines().index("a += 1") + 1
    assert codes(source) == [(line, "IPL002")]
    assert codes(STARRED.format(call="passthrough(x.clone())")) == []
    torch = pytest.importorskip("torch")
    scope = run(source)
    assert not torch.equal(scope["x"], scope["kept"])  # type: ignore[arg-type]


SHIFT = """
import torch

torch.manual_seed(0)
x = torch.rand(4, 6)
keep = x[:, 0] > 0.5
{line}
"""


@pytest.mark.parametrize(
    ("line", "reported"),
    [
        ("x[:, 1:] = x[:, :-1]", True),  # towards higher indices: smeared or refused
        ("x[1:] = x[:-1]", True),
        ("x[:-1] = x[1:]", True),  # towards lower indices along the first: contiguous
        ("x[:, :-1] = x[:, 1:]", False),  # strided: reads ahead and comes out right
        ("x[keep, 1:] = x[keep, :-1]", False),  # a mask gathers a copy
        ("x[:, 1:] = x[:, :-1].clone()", False),
    ],
)
def test_a_slice_copied_onto_a_shifted_slice_of_itself(line: str, reported: bool) -> None:
    source = SHIFT.format(line=line)
    expected = [(source.splitlines().index(line) + 1, "IPL002")] if reported else []
    assert codes(source) == expected
    torch = pytest.importorskip("torch")
    clean = SHIFT.format(line=line.rstrip(")").replace(".clone(", "") + ".clone()")
    try:
        same = torch.equal(run(source)["x"], run(clean)["x"])  # type: ignore[arg-type]
    except RuntimeError:  # torch refuses the overlapping copy
        same = False
    assert same is not reported
