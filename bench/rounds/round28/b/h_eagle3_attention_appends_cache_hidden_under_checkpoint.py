# label: hazard raises no-twin
# why: under torch.utils.checkpoint, LlamaAttention.forward writes the new key/value states into the caller's cache_hidden list in place, so the backward recomputation sees a longer cache than the original forward and rebuilds a different graph.
# source: https://github.com/SafeAILab/EAGLE/pull/268 (fix commit aaeae1ed38c53558e06f664429d95d473ec459a0)
import math

import torch
import torch.nn as nn
import torch.utils.checkpoint

torch.manual_seed(0)


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size * 2, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size * 2, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size * 2, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, cache_hidden=None, attention_mask=None):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

        cache_hidden[0] = cache_hidden[0] + [key_states]  # <-- IPL004
        cache_hidden[1] = cache_hidden[1] + [value_states]  # <-- IPL004

        cache_k = cache_hidden[0]
        cache_v = cache_hidden[1]

        k0 = cache_k[0]
        v0 = cache_v[0]
        attn_weights = torch.matmul(query_states, k0.transpose(2, 3)) / math.sqrt(self.head_dim)
        lck = len(cache_k)
        attn_weights = attn_weights + attention_mask
        for i in range(1, lck):
            attn_weightsi = (query_states * cache_k[i]).sum(-1) / math.sqrt(self.head_dim)
            attn_weights = torch.cat((attn_weights, attn_weightsi[..., None]), dim=-1)

        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32)
        attn_output = torch.matmul(attn_weights[..., :q_len], v0)
        for i in range(1, lck):
            attn_output = attn_output + attn_weights[..., q_len + i - 1][..., None] * cache_v[i]

        attn_output = attn_output.transpose(1, 2).reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(attn_output)


class LlamaDecoderLayeremb(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.self_attn = LlamaAttention(hidden_size, num_heads)
        self.hidden_norm = nn.LayerNorm(hidden_size)
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 2 * hidden_size), nn.SiLU(), nn.Linear(2 * hidden_size, hidden_size))

    def forward(self, input_emb, hidden_states, cache_hidden, attention_mask):
        residual = hidden_states
        hidden_states = self.hidden_norm(hidden_states)
        input_emb = self.input_layernorm(input_emb)
        hidden_states = torch.cat((input_emb, hidden_states), dim=-1)
        hidden_states = self.self_attn(hidden_states=hidden_states, cache_hidden=cache_hidden,
                                       attention_mask=attention_mask)
        hidden_states = residual + hidden_states
        hidden_states = hidden_states + self.mlp(hidden_states)
        return (hidden_states,)


class Model(nn.Module):
    def __init__(self, vocab_size=16, hidden_size=8, num_heads=2, length=3):
        super().__init__()
        self.length = length
        self.gradient_checkpointing = True
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.fc = nn.Linear(3 * hidden_size, hidden_size, bias=False)
        self.midlayer = LlamaDecoderLayeremb(hidden_size, num_heads)
        self.norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, hidden_states, input_ids, target_p):
        seq_length = input_ids.shape[1]
        attention_mask = torch.full((seq_length, seq_length), float("-inf")).triu(1)[None, None]
        hidden_states = self.fc(hidden_states)
        plosses = []
        cache_hidden = [[], []]
        for idx in range(self.length):
            inputs_embeds = self.embed_tokens(input_ids)
            if self.gradient_checkpointing and self.training:
                layer_outputs = torch.utils.checkpoint.checkpoint(
                    self.midlayer, inputs_embeds, hidden_states, cache_hidden, attention_mask,
                    use_reentrant=False,
                )
            else:
                layer_outputs = self.midlayer(inputs_embeds, hidden_states, cache_hidden, attention_mask)
            hidden_states = layer_outputs[0]
            logits = self.lm_head(self.norm(hidden_states))
            out_logp = nn.LogSoftmax(dim=2)(logits)
            plosses.append(-torch.sum(target_p * out_logp, 2).mean())
            input_ids = torch.cat((input_ids[:, 1:], torch.zeros_like(input_ids[:, -1:])), dim=1)
        return plosses


def main():
    model = Model()
    model.train()
    hidden_states = torch.randn(2, 5, 24)
    input_ids = torch.randint(0, 16, (2, 5))
    target_p = torch.softmax(torch.randn(2, 5, 16), dim=-1)
    plosses = model(hidden_states, input_ids, target_p)
    ploss = sum(0.8 ** i * p for i, p in enumerate(plosses))
    ploss.backward()
    return ploss, model.fc.weight.grad


loss, grad = main()
