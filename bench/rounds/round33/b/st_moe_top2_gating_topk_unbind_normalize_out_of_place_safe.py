# label: safe
# why: the commit's Top2Gating: after topk + unbind, the top-2 gates are normalised out of place (`gate_1 = gate_1 / denom`), so the later `gate_1 *= mask_1_flat` / `gate_2 *= mask_2_flat` act on fresh quotients and the masks' `*=` on grad-free one-hots; the MoE losses backpropagate.
# source: https://github.com/lucidrains/st-moe-pytorch/commit/4b22fac8dded0223e52d33c85f9dbe3db8db80c3
import math
from typing import Tuple, Optional

import torch
from torch.nn import Module, ModuleList
from torch import nn, einsum
import torch.nn.functional as F

torch.manual_seed(0)

# constants

MIN_EXPERT_CAPACITY = 4

# helper functions

def exists(val):
    return val is not None

def default(val, default):
    if exists(val):
        return val

    return default() if callable(default) else default

def Sequential(*modules):
    return nn.Sequential(*filter(exists, modules))

# tensor related helper functions

def cumsum_exclusive(t, dim = -2):
    num_dims = len(t.shape)
    num_pad_dims = - dim - 1
    pre_padding = (0, 0) * num_pad_dims
    return F.pad(t, (*pre_padding, 1, -1)).cumsum(dim = dim)

# pytorch one hot throws an error if there are out of bound indices.
# tensorflow, in contrast, does not throw an error

def safe_one_hot(indexes, max_length):
    max_index = indexes.max() + 1
    one_hot_classes = max(max_index + 1, max_length)
    return F.one_hot(indexes, one_hot_classes)[..., :max_length]

# expert class

class GEGLU(Module):
    def __init__(self, dim, mult_bias = True):
        super().__init__()
        self.mult_bias = nn.Parameter(torch.ones(dim)) if mult_bias else 1.

    def forward(self, x):
        x, gate = x.chunk(2, dim = -1)
        return F.gelu(gate) * x * self.mult_bias

class Expert(Module):
    def __init__(self, dim, hidden_mult = 4, mult_bias = True):
        super().__init__()
        dim_hidden = int(dim * hidden_mult * 2 / 3)

        self.net = Sequential(
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

# gating network

class Top2Gating(Module):
    def __init__(
        self,
        dim,
        num_gates,
        eps = 1e-9,
        second_policy_train = 'random',
        second_threshold_train = 0.2,
        capacity_factor_train = 1.25,
    ):
        super().__init__()
        self.eps = eps
        self.num_gates = num_gates
        self.w_gating = nn.Parameter(torch.randn(dim, num_gates))

        self.second_policy_train = second_policy_train
        self.second_threshold_train = second_threshold_train
        self.capacity_factor_train = capacity_factor_train

        self.register_buffer('zero', torch.zeros((1,)), persistent = False)

    def forward(self, x, importance = None):
        *_, b, group_size, dim, dtype, num_gates = *x.shape, x.dtype, self.num_gates

        policy = self.second_policy_train
        threshold = self.second_threshold_train
        capacity_factor = self.capacity_factor_train

        # logits and gates

        gate_logits = einsum('b n d, d e -> b n e', x, self.w_gating)
        raw_gates = gate_logits.softmax(dim = -1)

        density_1_proxy = raw_gates

        topk_raw_gates_values, topk_raw_gates_indices = raw_gates.topk(k = 2, dim = -1)

        gate_1, gate_2 = topk_raw_gates_values.unbind(dim = -1)
        index_1, index_2 = topk_raw_gates_indices.unbind(dim = -1)

        mask_1 = F.one_hot(index_1, num_gates).float()
        mask_2 = F.one_hot(index_2, num_gates).float()

        # normalize top2 gate scores

        denom = gate_1 + gate_2 + self.eps
        gate_1 = gate_1 / denom
        gate_2 = gate_2 / denom

        # BALANCING LOSSES

        density_1 = mask_1.mean(dim = -2)
        density_1_proxy = density_1_proxy.mean(dim = -2)

        balance_loss = (density_1_proxy * density_1).mean() * float(num_gates ** 2)

        if policy == "all":
            pass
        elif policy == "random":
            probs = torch.zeros_like(gate_2).uniform_(0., 1.)
            mask_2 *= (probs < (gate_2 / max(threshold, self.eps))).float().unsqueeze(-1)
        else:
            raise ValueError(f"Unknown policy {policy}")

        expert_capacity = min(group_size, int((group_size * capacity_factor) / num_gates))
        expert_capacity = max(expert_capacity, MIN_EXPERT_CAPACITY)
        expert_capacity_f = float(expert_capacity)

        # COMPUTE ASSIGNMENT TO EXPERTS

        position_in_expert_1 = cumsum_exclusive(mask_1) * mask_1
        mask_1 *= (position_in_expert_1 < expert_capacity_f).float()
        mask_1_count = mask_1.mean(dim = -2, keepdim = True)
        mask_1_flat = mask_1.sum(dim = -1)
        position_in_expert_1 = position_in_expert_1.sum(dim = -1)
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

        # router z-loss
        router_z_loss = torch.logsumexp(gate_logits, dim = -1)
        router_z_loss = router_z_loss.sum(dim = -1)
        router_z_loss = router_z_loss.mean()

        return dispatch_tensor, combine_tensor, balance_loss, router_z_loss

# plain mixture of experts

class MoE(Module):
    def __init__(self, dim, num_experts = 16, expert_hidden_mult = 4, loss_coef = 1e-2, router_z_loss_coef = 1e-3, experts: Optional[Module] = None):
        super().__init__()
        self.dim = dim
        self.num_experts = num_experts
        self.gate = Top2Gating(dim, num_gates = num_experts)
        self.experts = default(experts, lambda: Experts(dim, num_experts = num_experts, hidden_mult = expert_hidden_mult))
        self.loss_coef = loss_coef
        self.router_z_loss_coef = router_z_loss_coef

    def forward(self, inputs, **kwargs):
        dispatch_tensor, combine_tensor, loss, router_z_loss = self.gate(inputs)

        # dispatch
        expert_inputs = einsum('b n d, b n e c -> e b c d', inputs, dispatch_tensor)

        e, b, c, d = expert_inputs.shape
        expert_outputs = self.experts(expert_inputs.reshape(e, b * c, d))
        expert_outputs = expert_outputs.reshape(e, b, c, d)

        # combine
        output = einsum('e b c d, b n e c -> b n d', expert_outputs, combine_tensor)

        balance_loss = loss * self.loss_coef
        router_z_loss = router_z_loss * self.router_z_loss_coef

        return output, balance_loss, router_z_loss


def main():
    moe = MoE(dim = 16, num_experts = 4, expert_hidden_mult = 2)
    inputs = torch.randn(2, 32, 16)
    out, balance_loss, router_z_loss = moe(inputs)
    loss = out.pow(2).mean() + balance_loss + router_z_loss
    loss.backward()
    return loss.detach(), moe.gate.w_gating.grad.clone()


loss, w_gating_grad = main()
