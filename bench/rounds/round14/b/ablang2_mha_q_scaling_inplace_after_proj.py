# label: safe
# why: AbLang2's MultiHeadAttention scales the query projection in place (q *= self.scaling) right after q_proj; the Linear output is not saved by its backward, so the in-place scaling is harmless (the real PR 13 fix went elsewhere, a clone before the pre-attention LayerNorm)
# source: https://github.com/TobiasHeOl/AbLang2/blob/04b68432c359f3a17152e85d38978d670690aa02/ablang2/models/ablang2/encoderblock.py
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SimpleRotary(nn.Module):
    """Stand-in for rotary_embedding_torch.RotaryEmbedding.rotate_queries_or_keys."""

    def __init__(self, dim):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq)

    def rotate_queries_or_keys(self, t):
        seq_len = t.shape[-2]
        freqs = torch.einsum("i,j->ij", torch.arange(seq_len).float(), self.inv_freq)
        freqs = torch.cat((freqs, freqs), dim=-1)
        x1, x2 = t.chunk(2, dim=-1)
        rot = torch.cat((-x2, x1), dim=-1)
        return t * freqs.cos() + rot * freqs.sin()


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, attention_dropout_prob=0.0, bias=True):
        super().__init__()
        self.attention_dropout = nn.Dropout(attention_dropout_prob)
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.rotary_emb = SimpleRotary(dim=self.head_dim)

    def attention(self, q, k, v, attn_mask=None):
        attn_weights = torch.matmul(q, k.transpose(-2, -1))
        attn_weights = attn_weights / math.sqrt(self.head_dim)
        if attn_mask is not None:
            attn_mask = attn_mask[:, None, None, :]
            attn_weights = attn_weights.masked_fill(attn_mask, float("-inf"))
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn = self.attention_dropout(attn_weights)
        attn = torch.matmul(attn, v)
        return attn, attn_weights

    def forward(self, x, attn_mask=None, return_attn_weights=False):
        batch_size, seq_len, embed_dim = x.size()
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        q *= self.scaling

        q = q.contiguous().view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.contiguous().view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.contiguous().view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

        q = self.rotary_emb.rotate_queries_or_keys(q)
        k = self.rotary_emb.rotate_queries_or_keys(k)

        attn, attn_weights = self.attention(q, k, v, attn_mask=attn_mask)
        attn = attn.transpose(1, 2).reshape(batch_size, seq_len, embed_dim)
        attn = self.out_proj(attn)
        if return_attn_weights:
            return attn, attn_weights
        return attn, None


class TransformerEncoder(nn.Module):
    def __init__(self, hidden_embed_size, n_attn_heads, attn_dropout=0.0, layer_norm_eps=1e-05):
        super().__init__()
        self.multihead_attention = MultiHeadAttention(hidden_embed_size, n_attn_heads, attn_dropout)
        self.intermediate_layer = nn.Sequential(
            nn.Linear(hidden_embed_size, hidden_embed_size * 4),
            nn.GELU(),
            nn.Linear(hidden_embed_size * 4, hidden_embed_size),
        )
        self.pre_attn_layer_norm = nn.LayerNorm(hidden_embed_size, eps=layer_norm_eps)
        self.final_layer_norm = nn.LayerNorm(hidden_embed_size, eps=layer_norm_eps)

    def forward(self, hidden_embed, attn_mask=None, return_attn_weights=False):
        residual = hidden_embed
        hidden_embed = self.pre_attn_layer_norm(hidden_embed)
        hidden_embed, attn_weights = self.multihead_attention(
            hidden_embed, attn_mask=attn_mask, return_attn_weights=return_attn_weights
        )
        hidden_embed = residual + hidden_embed

        residual = hidden_embed
        hidden_embed = self.final_layer_norm(hidden_embed)
        hidden_embed = self.intermediate_layer(hidden_embed)
        hidden_embed = residual + hidden_embed
        return hidden_embed, attn_weights


class AbRep(nn.Module):
    def __init__(self, vocab_size=12, hidden_embed_size=16, n_attn_heads=2, n_encoder_blocks=2, padding_tkn=0):
        super().__init__()
        self.padding_tkn = padding_tkn
        self.aa_embed_layer = nn.Embedding(vocab_size, hidden_embed_size, padding_idx=padding_tkn)
        self.encoder_blocks = nn.ModuleList(
            [TransformerEncoder(hidden_embed_size, n_attn_heads) for _ in range(n_encoder_blocks)]
        )
        self.layer_norm_after_encoder_blocks = nn.LayerNorm(hidden_embed_size, eps=1e-12)

    def forward(self, tokens, return_attn_weights=False, return_rep_layers=()):
        padding_mask = tokens.eq(self.padding_tkn)
        hidden_embed = self.aa_embed_layer(tokens)
        return_rep_layers = set(return_rep_layers)
        rep_layers = {}
        all_attn_weights = []
        for n_layer, encoder_block in enumerate(self.encoder_blocks):
            hidden_embed, attn_weights = encoder_block(hidden_embed, padding_mask, return_attn_weights)
            if (n_layer + 1) in return_rep_layers:
                rep_layers[n_layer + 1] = hidden_embed
            if return_attn_weights:
                all_attn_weights.append(attn_weights)
        hidden_embed = self.layer_norm_after_encoder_blocks(hidden_embed)
        return hidden_embed, rep_layers, all_attn_weights


model = AbRep()
tokens = torch.tensor([[1, 5, 7, 3, 9, 0, 0], [2, 4, 6, 8, 10, 11, 1]])
labels = torch.randint(1, 12, (2, 7))
head = nn.Linear(16, 12)

last_hidden, reps, attn_ws = model(tokens, return_attn_weights=True, return_rep_layers=[1])
logits = head(last_hidden)
loss = F.cross_entropy(logits.view(-1, 12), labels.view(-1), ignore_index=0)
loss.backward()
first_layer_rep = reps[1].detach()
