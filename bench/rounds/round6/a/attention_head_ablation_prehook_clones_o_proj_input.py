# label: safe
# why: the head-ablation forward pre-hook clones o_proj's input before zeroing the selected heads' slices and returns the clone as the new argument, so the attention output the rest of the graph saved is never overwritten
# source: https://github.com/interp-reasoning/thought-anchors/issues/7 (proposed fix for whitebox-analyses/pytorch_models/ablation.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, hidden_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_dim // num_heads
        self.q_proj = nn.Linear(hidden_dim, hidden_dim)
        self.k_proj = nn.Linear(hidden_dim, hidden_dim)
        self.v_proj = nn.Linear(hidden_dim, hidden_dim)
        self.o_proj = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, hidden_states):
        B, S, D = hidden_states.shape
        q = self.q_proj(hidden_states).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
        attn = torch.softmax(q @ k.transpose(-1, -2) / self.head_dim ** 0.5, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(B, S, D)
        return (self.o_proj(out), attn)


class Block(nn.Module):
    def __init__(self, hidden_dim, num_heads):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_dim)
        self.self_attn = SelfAttention(hidden_dim, num_heads)
        self.mlp = nn.Sequential(nn.Linear(hidden_dim, 2 * hidden_dim), nn.GELU(), nn.Linear(2 * hidden_dim, hidden_dim))

    def forward(self, x):
        attn_out, _ = self.self_attn(self.ln(x))
        x = x + attn_out
        return x + self.mlp(x)


def zero_heads_prehook(heads, head_dim):
    def hook(module, args):
        x = args[0].clone()                       # [B, S, n_heads*head_dim], pre-projection
        for h in heads:
            x[..., h * head_dim:(h + 1) * head_dim] = 0
        return (x,) + tuple(args[1:])
    return hook


class AblationRunner:
    def __init__(self, model, layer_to_heads):
        self.model = model
        self.layer_to_heads = layer_to_heads
        self.handles = []

    def register_hooks(self):
        for layer_idx, heads in self.layer_to_heads.items():
            attn_module = self.model[layer_idx].self_attn
            handle = attn_module.o_proj.register_forward_pre_hook(zero_heads_prehook(heads, attn_module.head_dim))
            self.handles.append(handle)

    def remove_hooks(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


hidden_dim, num_heads = 8, 4
model = nn.Sequential(Block(hidden_dim, num_heads), Block(hidden_dim, num_heads))
unembed = nn.Linear(hidden_dim, 11)

embeds = torch.randn(1, 5, hidden_dim, requires_grad=True)
target = 3

runner = AblationRunner(model, {0: [1], 1: [0, 2]})
runner.register_hooks()
logits = unembed(model(embeds))
ablated_logprob = F.log_softmax(logits[0, -1], dim=-1)[target]
ablated_logprob.backward()
runner.remove_hooks()

with torch.no_grad():
    clean_logprob = F.log_softmax(unembed(model(embeds))[0, -1], dim=-1)[target]
effect = clean_logprob - ablated_logprob.detach()
saliency = embeds.grad.norm(dim=-1)
