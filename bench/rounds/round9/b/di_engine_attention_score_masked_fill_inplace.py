# label: safe
# why: the in-place div_ and masked_fill_ act on the fresh q @ k^T score tensor, which matmul does not save for backward, before softmax creates the tensor that is saved.
# source: https://github.com/opendilab/DI-engine/issues/333
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, input_dim, head_dim, output_dim, head_num, dropout):
        super().__init__()
        self.head_num = head_num
        self.head_dim = head_dim
        self.dropout = dropout
        self.attention_pre = nn.Linear(input_dim, head_dim * head_num * 3)
        self.project = nn.Linear(head_dim * head_num, output_dim)

    def split(self, x, T=False):
        B, N = x.shape[:2]
        x = x.view(B, N, self.head_num, self.head_dim)
        x = x.permute(0, 2, 1, 3).contiguous()
        if T:
            x = x.permute(0, 1, 3, 2).contiguous()
        return x

    def forward(self, x, mask=None):
        query, key, value = torch.chunk(self.attention_pre(x), 3, dim=2)
        query, key, value = self.split(query), self.split(key, T=True), self.split(value)
        score = torch.matmul(query, key)
        score.div_(math.sqrt(self.head_dim))
        if mask is not None:
            score.masked_fill_(~mask, -1e9)
        score = F.softmax(score, dim=-1)
        score = self.dropout(score)
        attention = torch.matmul(score, value)
        attention = attention.permute(0, 2, 1, 3).contiguous()
        attention = self.project(attention.view(attention.shape[0], attention.shape[1], -1))
        return attention


attn = Attention(input_dim=8, head_dim=4, output_dim=8, head_num=2, dropout=nn.Dropout(0.0))
x = torch.randn(2, 5, 8)
mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
mask[1, :, :, 3:] = False
out = attn(x, mask)
loss = out.pow(2).mean()
loss.backward()
