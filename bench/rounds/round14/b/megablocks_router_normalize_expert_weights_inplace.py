# label: hazard raises
# why: expert_weights is divided in place by its own norm, but the norm op saved expert_weights for backward
# source: https://github.com/databricks/megablocks/pull/70
from types import SimpleNamespace

import torch
import torch.nn as nn

torch.manual_seed(0)


def _uniform_expert_assignment(x, num_experts):
    return torch.arange(x.numel(), device=x.device).view_as(x) % num_experts


class LearnedRouter(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.layer = nn.Linear(args.hidden_size, args.moe_num_experts, bias=False)

    def jitter(self, x):
        low = 1.0 - self.args.moe_jitter_eps
        high = 1.0 + self.args.moe_jitter_eps
        noise = torch.rand(x.size(), dtype=x.dtype, device=x.device)
        return low + noise * (high - low)

    def _top_k(self, scores):
        if self.args.moe_top_k == 1:
            return scores.max(dim=-1, keepdim=True)
        return torch.topk(scores, self.args.moe_top_k, dim=-1)

    def forward(self, x):
        if self.training and self.args.moe_jitter_eps is not None:
            x = x * self.jitter(x)
        scores = self.layer(x.view(-1, x.shape[-1])).softmax(dim=-1)
        expert_weights, expert_indices = self._top_k(scores)
        if self.args.moe_normalize_expert_weights:
            expert_weights /= expert_weights.norm(p=self.args.moe_normalize_expert_weights, dim=-1, keepdim=True)  # <-- IPL001: norm() saved expert_weights for backward
        expert_indices = (
            _uniform_expert_assignment(expert_indices, self.args.moe_num_experts)
            if self.args.uniform_expert_assignment
            else expert_indices
        )
        return scores, expert_weights, expert_indices


class MoE(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.router = LearnedRouter(args)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(args.hidden_size, 16), nn.GELU(), nn.Linear(16, args.hidden_size)) for _ in range(args.moe_num_experts)]
        )

    def forward(self, x):
        in_shape = x.shape
        scores, expert_weights, top_experts = self.router(x)
        tokens = x.view(-1, in_shape[-1])
        out = torch.zeros_like(tokens)
        for k in range(top_experts.shape[-1]):
            for e, expert in enumerate(self.experts):
                mask = (top_experts[:, k] == e).unsqueeze(-1).to(tokens.dtype)
                out = out + mask * expert_weights[:, k : k + 1] * expert(tokens)
        return out.view(in_shape), scores


args = SimpleNamespace(
    hidden_size=8, moe_num_experts=4, moe_top_k=2, moe_jitter_eps=0.01,
    moe_normalize_expert_weights=1.0, uniform_expert_assignment=False,
)
moe = MoE(args)
x = torch.randn(2, 5, 8)
y, router_scores = moe(x)
lbl_loss = (router_scores.mean(0) ** 2).sum() * args.moe_num_experts
loss = y.pow(2).mean() + 0.01 * lbl_loss
loss.backward()
