# label: safe
# why: Top2Gating scales the normalised top-2 gate scores and the capacity masks in place (`gate_1 *= mask_1_flat`, `mask_2 *= ...`, `position_in_expert_2 *= mask_2`); `gate_1`/`gate_2` are fresh quotients that no backward node saved and the masks carry no grad, so the balance/z losses backprop correctly (the later rewrite to `gate_1 = gate_1 * mask_1_flat` was cleanup).
# source: https://github.com/lucidrains/st-moe-pytorch/commit/519ffff1229351debff7ec27fc2e7454628f4e78
from collections import namedtuple

import torch
from torch.nn import Module, ModuleList
from torch import nn, einsum
import torch.nn.functional as F

torch.manual_seed(0)

# constants

MIN_EXPERT_CAPACITY = 4

MixtureOfExpertsReturn = namedtuple('MixtureOfExpertsReturn', [
    'outputs',
    'balance_loss',
    'router_z_loss'
])

# helper functions

def exists(val):
    return val is not None

def default(val, default):
    if exists(val):
        return val
    return default() if callable(default) else default

def Sequential(*modules):
    return nn.Sequential(*filter(exists, modules))

def cumsum_exclusive(t, dim = -2):
    num_dims = len(t.shape)
    num_pad_dims = - dim - 1
    pre_padding = (0, 0) * num_pad_dims
    return F.pad(t, (*pre_padding, 1, -1)).cumsum(dim = dim)

def safe_one_hot(indexes, max_length):
    max_index = indexes.max() + 1
    one_hot_classes = max(max_index + 1, max_length)
    return F.one_hot(indexes, one_hot_classes)[..., :max_length]


class RMSNorm(Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.normalize(x, dim = -1) * self.gamma * self.scale


class GEGLU(Module):
    def __init__(self, dim, mult_bias = True):
        super().__init__()
        self.mult_bias = nn.Parameter(torch.ones(dim)) if mult_bias else 1.

    def forward(self, x):
        x, gate = x.chunk(2, dim = -1)
        return F.gelu(gate) * x * self.mult_bias


class Expert(Module):
    def __init__(self, dim, hidden_mult = 4, mult_bias = True, prenorm = False):
        super().__init__()
        dim_hidden = int(dim * hidden_mult * 2 / 3)
        self.net = Sequential(
            RMSNorm(dim) if prenorm else None,
            nn.Linear(dim, dim_hidden * 2),
            GEGLU(dim_hidden, mult_bias = mult_bias),
            nn.Linear(dim_hidden, dim)
        )

    def forward(self, x):
        return self.net(x)


class Experts(Module):
    def __init__(self, dim, num_experts = 16, hidden_mult = 4):
        super().__init__()
        self.experts = ModuleList([Expert(dim = dim, hidden_mult = hidden_mult) for _ in range(num_experts)])

    def forward(self, x):
        outputs = []
        for tokens, expert in zip(x, self.experts):
            outputs.append(expert(tokens))
        return torch.stack(outputs)


class Top2Gating(Module):
    def __init__(self, dim, num_gates, eps = 1e-9, second_threshold_train = 0.2, second_threshold_eval = 0.2,
                 capacity_factor_train = 1.25, capacity_factor_eval = 2., detached_dispatch_tensor = True):
        super().__init__()
        self.eps = eps
        self.num_gates = num_gates
        self.to_gates = nn.Linear(dim, num_gates, bias = False)
        self.second_threshold_train = second_threshold_train
        self.second_threshold_eval = second_threshold_eval
        self.capacity_factor_train = capacity_factor_train
        self.capacity_factor_eval = capacity_factor_eval
        self.detached_dispatch_tensor = detached_dispatch_tensor
        self.register_buffer('zero', torch.zeros((1,)), persistent = False)

    def forward(self, x):
        *_, b, group_size, dim, dtype, num_gates = *x.shape, x.dtype, self.num_gates

        suffix = 'train' if self.training else 'eval'
        threshold = getattr(self, f'second_threshold_{suffix}')
        capacity_factor = getattr(self, f'capacity_factor_{suffix}')

        expert_capacity = min(group_size, int((group_size * capacity_factor) / num_gates))
        expert_capacity = max(expert_capacity, MIN_EXPERT_CAPACITY)
        expert_capacity_f = float(expert_capacity)

        gate_logits = self.to_gates(x)
        raw_gates = gate_logits.softmax(dim = -1)

        topk_raw_gates_values, topk_raw_gates_indices = raw_gates.topk(k = 2, dim = -1)

        gate_1, gate_2 = topk_raw_gates_values.unbind(dim = -1)
        index_1, index_2 = topk_raw_gates_indices.unbind(dim = -1)

        mask_1 = F.one_hot(index_1, num_gates).float()
        mask_2 = F.one_hot(index_2, num_gates).float()

        # normalize top2 gate scores

        denom = gate_1 + gate_2 + self.eps
        gate_1 = gate_1 / denom
        gate_2 = gate_2 / denom

        probs = torch.zeros_like(gate_2).uniform_(0., 1.)
        route_second_expert = probs < (gate_2 / max(threshold, self.eps))
        mask_2 *= route_second_expert.float().unsqueeze(-1)

        position_in_expert_1 = cumsum_exclusive(mask_1) * mask_1
        mask_1 *= (position_in_expert_1 < expert_capacity_f).float()
        mask_1_count = mask_1.sum(dim = -2, keepdim = True)
        mask_1_flat = mask_1.sum(dim = -1)
        position_in_expert_1 = position_in_expert_1.sum(dim = -1)
        # Weight assigned to first expert.  [batch, group]
        gate_1 *= mask_1_flat

        position_in_expert_2 = cumsum_exclusive(mask_2) + mask_1_count
        position_in_expert_2 *= mask_2
        mask_2 *= (position_in_expert_2 < expert_capacity_f).float()
        mask_2_flat = mask_2.sum(dim = -1)

        position_in_expert_2 = position_in_expert_2.sum(dim = -1)
        gate_2 *= mask_2_flat

        N = None

        combine_tensor = (
            gate_1[..., N, N]
            * mask_1_flat[..., N, N]
            * F.one_hot(index_1, num_gates)[..., N]
            * safe_one_hot(position_in_expert_1.long(), expert_capacity)[..., N, :] +
            gate_2[..., N, N]
            * mask_2_flat[..., N, N]
            * F.one_hot(index_2, num_gates)[..., N]
            * safe_one_hot(position_in_expert_2.long(), expert_capacity)[..., N, :]
        )

        dispatch_tensor = combine_tensor.bool().type(dtype)

        if not self.detached_dispatch_tensor:
            dispatch_tensor = dispatch_tensor + combine_tensor - combine_tensor.detach()

        if self.training:
            density_1 = mask_1.mean(dim = -2)
            density_1_proxy = raw_gates.mean(dim = -2)
            balance_loss = (density_1_proxy * density_1).mean() * float(num_gates ** 2)
        else:
            balance_loss = self.zero

        if self.training:
            router_z_loss = torch.logsumexp(gate_logits, dim = -1)
            router_z_loss = torch.square(router_z_loss)
            router_z_loss = router_z_loss.mean()
        else:
            router_z_loss = self.zero

        return dispatch_tensor, combine_tensor, balance_loss, router_z_loss


class MoE(Module):
    def __init__(self, dim, num_experts = 16, expert_hidden_mult = 4, second_threshold_train = 0.2,
                 second_threshold_eval = 0.2, capacity_factor_train = 1.25, capacity_factor_eval = 2.,
                 loss_coef = 1e-2, router_z_loss_coef = 1e-3, experts = None, detached_dispatch_tensor = True):
        super().__init__()
        self.dim = dim
        self.num_experts = num_experts
        gating_kwargs = dict(
            second_threshold_train = second_threshold_train,
            second_threshold_eval = second_threshold_eval,
            capacity_factor_train = capacity_factor_train,
            capacity_factor_eval = capacity_factor_eval
        )
        self.gate = Top2Gating(dim, num_gates = num_experts, detached_dispatch_tensor = detached_dispatch_tensor, **gating_kwargs)
        self.experts = default(experts, lambda: Experts(dim, num_experts = num_experts, hidden_mult = expert_hidden_mult))
        self.loss_coef = loss_coef
        self.router_z_loss_coef = router_z_loss_coef

    def forward(self, inputs, **kwargs):
        dispatch_tensor, combine_tensor, loss, router_z_loss = self.gate(inputs)

        expert_inputs = einsum('b n d, b n e c -> e b c d', inputs, dispatch_tensor)

        e, b, c, d = expert_inputs.shape
        expert_inputs = expert_inputs.reshape(e, b * c, d)
        expert_outputs = self.experts(expert_inputs)
        expert_outputs = expert_outputs.reshape(e, b, c, d)

        output = einsum('e b c d, b n e c -> b n d', expert_outputs, combine_tensor)

        balance_loss = loss * self.loss_coef
        router_z_loss = router_z_loss * self.router_z_loss_coef

        return MixtureOfExpertsReturn(output, balance_loss, router_z_loss)


class SparseMoEBlock(Module):
    def __init__(self, moe, *, add_ff_before = False, add_ff_after = True):
        super().__init__()
        dim = moe.dim
        self.moe = moe
        self.moe_prenorm = RMSNorm(dim)
        self.ff_before = Expert(dim, prenorm = True) if add_ff_before else None
        self.ff_after = Expert(dim, prenorm = True) if add_ff_after else None

    def forward(self, x):
        if exists(self.ff_before):
            x = self.ff_before(x) + x
        residual = x
        moe_out, balance_loss, router_z_loss = self.moe(self.moe_prenorm(x))
        x = moe_out + residual
        if exists(self.ff_after):
            x = self.ff_after(x) + x
        return MixtureOfExpertsReturn(x, balance_loss, router_z_loss)


def main():
    moe = MoE(dim = 32, num_experts = 4, expert_hidden_mult = 2, detached_dispatch_tensor = False)
    block = SparseMoEBlock(moe, add_ff_before = True, add_ff_after = True)
    x = torch.randn(2, 16, 32)
    out, balance_loss, router_z_loss = block(x)
    loss = out.pow(2).mean() + balance_loss + router_z_loss
    loss.backward()
    return out.detach(), loss.detach(), moe.gate.to_gates.weight.grad.clone()


out, total_loss, gate_grad = main()
