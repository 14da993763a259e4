"""Facts about what a call saves, runs and writes, each from the sixteenth session's
measurements (rounds 24 and 25, untuned run 20): saves that exist only when the saved tensor
itself requires grad (a layer without parameters first in a same-file module); the steps of a
custom ``autograd.Function`` running with grad off; a loop that runs once; a name's earlier
branch arm kept through a later branch; a Tensor method's arity (``semiring.zero_(x)`` is no
tensor method); ``nn.init`` writes under no_grad; stale reads inside optimizer steps through
a second local name; a name unpacked from a list parameter (``x_h, x_l = x``) written in
place. Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

STYLE = """
import torch

torch.manual_seed(0)


class ConvLayer(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.pad = torch.nn.ReflectionPad2d(1)
        self.conv = torch.nn.Conv2d(cin, cout, 3)

    def forward(self, x):
        return self.conv(self.pad(x))


def normalize_batch(batch):
    batch = batch.div_(255.0)
    return batch - 0.5


def main():
    layer = ConvLayer(3, 3)
    x = torch.rand(1, 3, 6, 6){grad} * 255
    y = layer(x)
    x = normalize_batch(x)
    (y.sum() + x.sum()).backward()


main()
"""


def test_a_layer_without_parameters_keeps_an_input_only_when_it_requires_grad() -> None:
    safe = STYLE.format(grad="")
    hazard = STYLE.format(grad=".requires_grad_()")
    assert codes(safe) == []
    assert codes(hazard) == [(18, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")


KERNEL = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Kernel(nn.Module):
    def _forward(self, a, b):
        diffs = a[:, None, :] - b[None, :, :]
        return diffs.norm(dim=-1).square_()


class KernelFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, kernel):
        ctx.kernel = kernel
        ctx.save_for_backward(a, b)
        return ctx.kernel._forward(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output.sum(1)[:, None] * a, grad_output.sum(0)[:, None] * b, None


def main():
    kernel = Kernel()
    a = torch.randn(4, 2, requires_grad=True)
    b = torch.randn(3, 2, requires_grad=True)
    k = {call}
    k.sum().backward()


main()
"""


def test_a_method_called_only_from_a_custom_function_runs_with_grad_off() -> None:
    safe = KERNEL.format(call="KernelFunction.apply(a, b, kernel)")
    hazard = KERNEL.format(call="kernel._forward(a, b)")
    assert codes(safe) == []
    assert codes(hazard) == [(11, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")


CRITIC = """
import torch
import torch.nn as nn

torch.manual_seed(0)


def train(discriminator, fake, real):
    optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.1)
    real_out = discriminator(real)
    fake_out = discriminator(fake)
    critic_updates = {updates}
    for _ in range(critic_updates):
        optimizer.zero_grad()
        loss = (fake_out - real_out).mean()
        loss.backward(retain_graph=True)
        optimizer.step()
    return loss.item()


train(nn.Linear(3, 1), torch.randn(4, 3, requires_grad=True), torch.randn(4, 3))
"""


def test_a_loop_over_range_of_a_name_bound_to_one_runs_once() -> None:
    safe = CRITIC.format(updates=1)
    hazard = CRITIC.format(updates=2)
    assert codes(safe) == []
    assert codes(hazard) == [(17, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")


RESIDUAL = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvResBlock(nn.Module):
    def __init__(self, batch_norm, down_sample):
        super().__init__()
        self.conv3 = nn.Conv1d(4, 4, 1)
        self.bn3 = nn.BatchNorm1d(4)
        self.bn4 = nn.BatchNorm1d(4)
        self.batch_norm = batch_norm
        self.down_sample = down_sample

    def forward(self, x):
        residual = x
        out = self.conv3(x)
        if self.batch_norm:
            out = {norm}
        if self.down_sample:
            if self.batch_norm:
                residual = self.bn4(residual)
        out += residual
        return out


flags = [True, True]  # from a config
ConvResBlock(*flags)(torch.randn(2, 4, 3, requires_grad=True)).sum().backward()
"""


def test_a_name_kept_on_every_arm_of_a_later_branch_keeps_its_earlier_arm() -> None:
    safe = RESIDUAL.format(norm="self.bn3(out)")  # BatchNorm keeps its input, not ``out``
    hazard = RESIDUAL.format(norm="torch.sigmoid(out)")  # sigmoid keeps its output
    assert codes(safe) == []
    assert codes(hazard) == [(25, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")


SEMIRING = """
import torch

torch.manual_seed(0)


class LogSemiring:
    @classmethod
    def zero_(cls, x):
        return x.fill_(-1e4)


class Tree(torch.nn.Module):
    def forward(self, semiring, h):
        ir = h + 1
        {call}
        return ir.sum()


w = torch.randn(3, 3, requires_grad=True)
h = torch.sigmoid(w)
semiring = {semiring}
Tree()(*[semiring, h]).backward()
"""


def test_a_method_called_with_more_arguments_than_the_tensor_method_takes_is_no_tensor() -> None:
    safe = SEMIRING.format(call="semiring.zero_(ir[0])", semiring="LogSemiring")
    hazard = SEMIRING.format(call="semiring.zero_()", semiring="h")
    assert codes(safe) == []
    assert codes(hazard) == [(16, "IPL004")]
    behave(hazard, safe, match="modified by an inplace operation")


LECUN = """
import math

import torch
import torch.nn as nn
from torch.nn import init


def lecun_uniform(tensor):
    limit = math.sqrt(3.0 / tensor.shape[1])
    {fill}


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.e_x = nn.Parameter(torch.empty(1, 4))
        lecun_uniform(self.e_x)


Cell()
"""


def test_an_nn_init_call_in_a_helper_writes_its_argument_under_no_grad() -> None:
    safe = LECUN.format(fill="init.uniform_(tensor, -limit, limit)")
    hazard = LECUN.format(fill="tensor.uniform_(-limit, limit)")
    assert codes(safe) == []
    assert codes(hazard) == [(11, "IPL003")]  # the caller's leaf, written by the helper
    behave(hazard, safe, match="leaf Variable that requires grad")


LION = """
import torch
from torch.optim import Optimizer

torch.manual_seed(0)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-2, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                update = {update}
                update.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)
                p.add_(update.sign(), alpha=-group["lr"])


w = torch.nn.Parameter(torch.randn(4))
optimizer = Lion([w])
for _ in range(3):
    optimizer.zero_grad()
    (w * torch.arange(4.0)).sum().backward()
    optimizer.step()
final = optimizer.state[w]["exp_avg"].clone()
"""


def test_an_optimizer_state_read_again_through_a_local_alias_is_stale() -> None:
    safe = LION.format(update="exp_avg.clone()")
    hazard = LION.format(update="exp_avg")
    assert codes(safe) == []
    assert (22, "IPL002") in codes(hazard)
    assert run(safe)["final"].ne(run(hazard)["final"]).any()


FOREACH = """
import torch
from torch.optim import Optimizer


class ListAdam(Optimizer):
    def __init__(self, params, lr=1e-2):
        super().__init__(params, dict(lr=lr))

    def _state_of(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["exp_avg"] = torch.zeros_like(p)
            state["max_exp_avg"] = torch.zeros_like(p)
        return state

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            params, exp_avgs, max_exp_avgs = [], [], []
            for p in group["params"]:
                if p.grad is not None:
                    state = self._state_of(p)
                    params.append(p)
                    exp_avgs.append(state["exp_avg"])
                    max_exp_avgs.append(state["max_exp_avg"])
            for i, param in enumerate(params):
                exp_avg = exp_avgs[i]
                exp_avg.mul_(0.9).add_(param.grad, alpha=0.1)
                torch.maximum(max_exp_avgs[i], exp_avg, out=max_exp_avgs[i])
                param.add_(max_exp_avgs[i], alpha=-group["lr"])


w = torch.nn.Parameter(torch.randn(4))
v = torch.nn.Parameter(torch.randn(4))
optimizer = ListAdam([w, v])
(w * v).sum().backward()
optimizer.step()
"""


def test_an_optimizer_state_read_through_its_store_is_meant_to_change() -> None:
    assert codes(FOREACH) == []
    run(FOREACH)


CHAIN = """
import torch
import torch.nn as nn


class LogSemiring:
    @classmethod
    def mul(cls, x, y):
        return x + y

    @classmethod
    def dot(cls, x, y, dim=-1):
        return (x + y).logsumexp(dim)


class LinearChain(nn.Module):
    def __init__(self):
        super().__init__()
        self.trans = nn.Parameter(torch.randn(3, 3))

    def forward(self, semiring, scores, mask):
        alpha = scores[0].clone()
        for i in range(1, len(mask)):
            alpha[mask[i]] = {step}[mask[i]]
        return alpha


scores = torch.randn(4, 2, 3)
mask = torch.tensor([[True, True], [True, False], [True, True], [False, True]])
LinearChain()(LogSemiring, scores, mask).sum().backward()
"""


def test_a_forward_input_called_with_too_many_arguments_is_no_tensor() -> None:
    safe = CHAIN.format(
        step="semiring.mul(semiring.dot(alpha.unsqueeze(2), self.trans, 1), scores[i])"
    )
    hazard = CHAIN.format(step="(alpha.unsqueeze(2) * self.trans).sum(1)")
    assert codes(safe) == []
    assert codes(hazard) == [(24, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")


GPTQ = """
import torch


class Quantizer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3))

    def find_params(self, x):
        xmin = torch.sigmoid(x.min(1).values * self.scale)
        xmax = torch.sigmoid(x.max(1).values * self.scale)
        tmp = xmin == xmax
        xmin[tmp] = -1
        return xmax - xmin


class Block:
    def __init__(self):
        self.quantizer = Quantizer()

    def fasterquant(self, w):
        return self.quantizer.find_params(w)


class Runner:
    {decorator}
    def execute(self, weights):
        blocks = {{name: Block() for name in weights}}
        return [blocks[name].fasterquant(w) for name, w in weights.items()]


weights = {{"fc": torch.zeros(3, 4)}}
scales = Runner().execute(weights)
if scales[0].requires_grad:
    scales[0].sum().backward()
"""


def test_a_method_reached_only_through_subscripted_receivers_under_no_grad_runs_with_grad_off() -> (
    None
):
    safe = GPTQ.format(decorator="@torch.no_grad()")
    hazard = GPTQ.format(decorator="")
    assert codes(safe) == []
    assert codes(hazard) == [(14, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")


RENAMED = """
import torch
from torch.optim import Optimizer


class RenamedAdam(Optimizer):
    def __init__(self, params, lr=1e-2):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["v"] = torch.zeros_like(p)
                v = state["v"]
                nu = v  # the same state under the paper's name
                nu.mul_(0.9).addcmul_(p.grad, p.grad, value=0.1)
                d = r = p.grad.clone()
                r.mul_(0.5)
                p.addcdiv_(d, v.sqrt().add(1e-8), value=-group["lr"])


w = torch.nn.Parameter(torch.randn(4))
optimizer = RenamedAdam([w])
(w * w).sum().backward()
optimizer.step()
"""


def test_an_optimizer_state_renamed_and_read_after_its_update_is_meant_to_change() -> None:
    assert codes(RENAMED) == []
    run(RENAMED)


UNPACKED = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.compression = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x_h, x_l = x
        x_h {update} self.compression(x_l)
        return x_h, x_l


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU()
        self.block = Block()

    def forward(self, a, b):
        return self.block([self.relu(a), self.relu(b)])


a = torch.randn(1, 4, 3, 3, requires_grad=True)
h, l = Stage()(a, torch.randn(1, 4, 3, 3))
(h.sum() + l.sum()).backward()
"""


def test_a_name_unpacked_from_a_list_parameter_is_that_element_of_the_callers_list() -> None:
    safe = UNPACKED.format(update="= x_h +")
    hazard = UNPACKED.format(update="+=")
    assert codes(safe) == []
    assert codes(hazard) == [(13, "IPL001")]
    behave(hazard, safe, match="modified by an inplace operation")
