# label: hazard raises
# why: attention-probability dropout is applied with inplace=True directly on the softmax output that softmax saved for backward.
import math

import torch
from torch import nn


class BertSelfAttention(nn.Module):
    def __init__(self, hidden_size=8, num_attention_heads=2, attention_probs_dropout_prob=0.25):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = hidden_size // num_attention_heads
        self.all_head_size = hidden_size
        self.query = nn.Linear(hidden_size, self.all_head_size)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(attention_probs_dropout_prob, inplace=True)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)  # <-- IPL001: in-place dropout on saved softmax output
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        return context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))


torch.manual_seed(0)
attn = BertSelfAttention()
hidden = torch.randn(2, 3, 8)
ext_mask = (1.0 - torch.tensor([[1, 1, 1], [1, 1, 0]], dtype=torch.float))[:, None, None, :] * -10000.0
ctx = attn(hidden, ext_mask)
loss = ctx.sum()
loss.backward()
