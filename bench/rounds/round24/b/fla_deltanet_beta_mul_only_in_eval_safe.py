# label: safe
# why: after the fix the padding mask is applied with out-of-place torch.mul whenever the layer is training; the in-place torch.mul_ is only chosen in eval mode, where no backward will read the sigmoid output.
# source: https://github.com/fla-org/flash-linear-attention/commit/670f5706da1cbf44fd98823df95ccdc3ed9d497f
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def l2_norm(x):
    return x / x.norm(dim=-1, keepdim=True).clamp(min=1e-6)


def naive_recurrent_delta_rule(q, k, v, beta):
    b, h, l, d_k = q.shape
    S = q.new_zeros(b, h, d_k, v.shape[-1])
    outs = []
    for i in range(l):
        _k, _q, _v, _beta = k[:, :, i], q[:, :, i], v[:, :, i], beta[:, :, i]
        _v = _v - (S * _k[..., None]).sum(-2)
        _v = _v * _beta[..., None]
        S = S + _k.unsqueeze(-1) * _v.unsqueeze(-2)
        outs.append(torch.einsum('bhd,bhdm->bhm', _q, S))
    return torch.stack(outs, dim=2), S


class DeltaNet(nn.Module):
    def __init__(self, hidden_size=8, num_heads=2, use_beta=True):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.key_dim = hidden_size
        self.value_dim = hidden_size
        self.head_k_dim = self.key_dim // num_heads
        self.head_v_dim = self.value_dim // num_heads
        self.use_beta = use_beta
        self.q_proj = nn.Linear(hidden_size, self.key_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, self.key_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, self.value_dim, bias=False)
        if self.use_beta:
            self.b_proj = nn.Linear(hidden_size, self.num_heads, bias=False)
        self.o_proj = nn.Linear(self.value_dim, hidden_size, bias=False)

    def _heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, -1).transpose(1, 2)

    def forward(self, hidden_states, attention_mask=None):
        q = F.silu(self.q_proj(hidden_states))
        k = F.silu(self.k_proj(hidden_states))
        v = F.silu(self.v_proj(hidden_states))
        q, k, v = map(self._heads, (q, k, v))
        q, k = l2_norm(q), l2_norm(k)

        if self.use_beta:
            beta = self.b_proj(hidden_states).transpose(1, 2).sigmoid()
        else:
            beta = q.new_ones(q.shape[0], q.shape[1], q.shape[2])

        # dealing with padding
        if attention_mask is not None:
            beta = (torch.mul if self.training else torch.mul_)(beta, attention_mask[:, None, -beta.shape[-1]:])
        o, recurrent_state = naive_recurrent_delta_rule(q, k, v, beta)
        o = o.transpose(1, 2).reshape(hidden_states.shape[0], hidden_states.shape[1], self.value_dim)
        return self.o_proj(o)


def main():
    layer = DeltaNet()
    layer.train()
    hidden_states = torch.randn(2, 5, 8)
    attention_mask = torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]], dtype=torch.float32)
    out = layer(hidden_states, attention_mask)
    out.pow(2).mean().backward()
    return layer.b_proj.weight.grad


b_proj_grad = main()
