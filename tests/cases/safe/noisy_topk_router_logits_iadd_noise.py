# label: safe
# why: the router adds jitter into its own Linear logits with += (a fresh output nothing saved), leaving the hidden states the experts consume untouched.
import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyTopKRouter(nn.Module):
    def __init__(self, dim, num_experts, k=2, noise_std=1.0):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.noise = nn.Linear(dim, num_experts, bias=False)
        self.k = k
        self.noise_std = noise_std

    def forward(self, x):
        logits = self.gate(x)
        if self.training:
            noise_scale = F.softplus(self.noise(x)) * self.noise_std
            logits += torch.randn_like(logits) * noise_scale
        topk_vals, topk_idx = logits.topk(self.k, dim=-1)
        weights = topk_vals.softmax(dim=-1)
        return weights, topk_idx


class MoELayer(nn.Module):
    def __init__(self, dim=6, num_experts=4, k=2):
        super().__init__()
        self.router = NoisyTopKRouter(dim, num_experts, k)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(inplace=True), nn.Linear(2 * dim, dim))
            for _ in range(num_experts)
        )

    def forward(self, x):
        weights, idx = self.router(x)
        out = torch.zeros_like(x)
        for slot in range(idx.shape[-1]):
            for e, expert in enumerate(self.experts):
                sel = idx[:, slot] == e
                if sel.any():
                    out[sel] += weights[sel, slot, None] * expert(x[sel])
        return x + out


torch.manual_seed(0)
layer = MoELayer()
layer.train()
x = torch.randn(7, 6)
out = layer(x)
loss = out.pow(2).sum()
loss.backward()
