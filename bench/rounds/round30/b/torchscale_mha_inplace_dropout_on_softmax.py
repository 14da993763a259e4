# label: hazard raises
# why: MultiheadAttention builds its dropout with inplace=True and applies it to attn_weights, which is the softmax output that SoftmaxBackward saved, so in training the attention-probability dropout overwrites a tensor needed for backward.
# source: https://github.com/microsoft/torchscale/commit/0cb96955010a93818b3dafb99708f465bcbcc651
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.1, self_attention=True):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.self_attention = self_attention
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.inner_attn_ln = None
        self.dropout_module = torch.nn.Dropout(dropout, inplace=True)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None):
        bsz, tgt_len, embed_dim = query.size()
        key_bsz, src_len, _ = key.size()

        q = self.q_proj(query)
        k = self.k_proj(key)
        v = self.v_proj(value)
        q *= self.scaling

        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        q = q.reshape(bsz * self.num_heads, tgt_len, self.head_dim)
        k = k.reshape(bsz * self.num_heads, src_len, self.head_dim)
        v = v.reshape(bsz * self.num_heads, src_len, self.head_dim)

        attn_weights = torch.bmm(q, k.transpose(1, 2))

        if attn_mask is not None:
            attn_weights = torch.nan_to_num(attn_weights)
            attn_weights += attn_mask.unsqueeze(0)

        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)

        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)
        attn_probs = self.dropout_module(attn_weights)  # <-- IPL001

        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).reshape(tgt_len, bsz, embed_dim).transpose(0, 1)
        attn = self.out_proj(attn)
        attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len).transpose(1, 0)
        return attn, attn_weights


class DecoderLayer(nn.Module):
    def __init__(self, embed_dim=16, num_heads=2, dropout=0.1):
        super().__init__()
        self.self_attn = MultiheadAttention(embed_dim, num_heads, dropout=dropout)
        self.self_attn_layer_norm = nn.LayerNorm(embed_dim)
        self.dropout_module = torch.nn.Dropout(dropout)

    def forward(self, x, self_attn_mask=None):
        residual = x
        x = self.self_attn_layer_norm(x)
        x, attn = self.self_attn(query=x, key=x, value=x, attn_mask=self_attn_mask)
        x = self.dropout_module(x)
        return residual + x, attn


def main():
    layer = DecoderLayer()
    layer.train()
    tokens = torch.randn(2, 5, 16)
    causal = torch.triu(torch.full((5, 5), float("-inf")), 1)
    out, attn = layer(tokens, self_attn_mask=causal)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), layer.self_attn.q_proj.weight.grad


loss, grad = main()
