# label: safe
# why: the fix clones the layer input into residual, so the fused add-RMSNorm only writes private buffers and the hidden states collected by the model loop stay intact
# source: https://github.com/sgl-project/sglang/pull/28005
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fused_add_rmsnorm(x, residual, weight, eps):
    """Stand-in for the fused CUDA kernel: residual <- x + residual; x <- rmsnorm(residual) * weight, both in place."""
    residual.add_(x)
    variance = residual.pow(2).mean(-1, keepdim=True)
    x.copy_(residual * torch.rsqrt(variance + eps) * (1.0 + weight))
    return x, residual


class GemmaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(hidden_size))
        self.variance_epsilon = eps

    def forward(self, x, residual=None):
        if residual is not None:
            x, residual = fused_add_rmsnorm(x, residual, self.weight.data, self.variance_epsilon)
            return x, residual
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.variance_epsilon) * (1.0 + self.weight)


class Gemma4DecoderLayer(nn.Module):
    def __init__(self, hidden_size=16, num_heads=2):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(hidden_size, num_heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 32), nn.GELU(approximate="tanh"), nn.Linear(32, hidden_size))
        self.input_layernorm = GemmaRMSNorm(hidden_size)
        self.post_attention_layernorm = GemmaRMSNorm(hidden_size)
        self.pre_feedforward_layernorm = GemmaRMSNorm(hidden_size)
        self.post_feedforward_layernorm = GemmaRMSNorm(hidden_size)
        for norm in (self.input_layernorm, self.post_attention_layernorm,
                     self.pre_feedforward_layernorm, self.post_feedforward_layernorm):
            nn.init.normal_(norm.weight, std=0.1)

    def forward(self, hidden_states, attn_mask):
        residual = hidden_states.clone()
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, _ = self.self_attn(hidden_states, hidden_states, hidden_states,
                                          attn_mask=attn_mask, need_weights=False)
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states, residual = self.pre_feedforward_layernorm(hidden_states, residual)
        hidden_states = self.mlp(hidden_states)
        hidden_states = self.post_feedforward_layernorm(hidden_states)
        return hidden_states + residual


class Gemma4Model(nn.Module):
    def __init__(self, vocab_size=32, hidden_size=16, num_layers=3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([Gemma4DecoderLayer(hidden_size) for _ in range(num_layers)])
        self.norm = GemmaRMSNorm(hidden_size)

    @torch.no_grad()
    def forward(self, input_ids, output_hidden_states=True):
        T = input_ids.shape[1]
        attn_mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        hidden_states = self.embed_tokens(input_ids) * (self.embed_tokens.embedding_dim ** 0.5)
        all_hidden_states = []
        for layer in self.layers:
            if output_hidden_states:
                all_hidden_states.append(hidden_states)
            hidden_states = layer(hidden_states, attn_mask)
        hidden_states = self.norm(hidden_states)
        all_hidden_states.append(hidden_states)
        return hidden_states, all_hidden_states


model = Gemma4Model()
input_ids = torch.tensor([[1, 5, 7, 2, 9, 3]])
last_hidden, all_hidden = model(input_ids)
hidden_stack = torch.stack(all_hidden)
