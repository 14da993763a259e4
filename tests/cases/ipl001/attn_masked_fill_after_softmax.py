# label: hazard raises
# why: to zero fully-padded query rows the attention probabilities are masked in place after softmax, which saved its output for backward.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.dropout = dropout

    def forward(self, x, key_padding_mask):
        bsz, tgt_len, embed_dim = x.shape
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.head_dim ** -0.5
        mask = key_padding_mask[:, None, None, :]
        scores = scores.masked_fill(mask, -1e9)
        attn = F.softmax(scores, dim=-1)
        attn.masked_fill_(mask, 0.0)  # <-- IPL001: softmax saved `attn` for its backward
        attn = F.dropout(attn, p=self.dropout, training=self.training)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
        return self.out_proj(out)


torch.manual_seed(0)
layer = MultiHeadSelfAttention(8, 2)
x = torch.randn(2, 4, 8)
padding = torch.tensor([[False, False, True, True], [False, False, False, True]])
y = layer(x, padding)
loss = y.pow(2).sum()
loss.backward()
