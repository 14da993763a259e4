# label: hazard raises
# why: the feed-forward block applies an in-place ReLU and then an in-place Dropout to the ReLU's own output, which the ReLU saved for its backward.
# source: https://github.com/OpenNMT/OpenNMT-py/commit/c75a97949be3aff4837792d5dd596019c1281456
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, size, hidden_size, dropout=0.1):
        super(PositionwiseFeedForward, self).__init__()
        self.w_1 = nn.Linear(size, hidden_size)
        self.w_2 = nn.Linear(hidden_size, size)
        self.layer_norm = nn.LayerNorm(size)
        # Save a little memory, by doing inplace.
        self.dropout_1 = nn.Dropout(dropout, inplace=True)  # <-- IPL001: drops out in place the ReLU output saved for backward
        self.relu = nn.ReLU(inplace=True)
        self.dropout_2 = nn.Dropout(dropout)

    def forward(self, x):
        inter = self.dropout_1(self.relu(self.w_1(self.layer_norm(x))))
        output = self.dropout_2(self.w_2(inter))
        return output + x


class MultiHeadedAttention(nn.Module):
    def __init__(self, head_count, model_dim, dropout=0.1):
        super().__init__()
        self.dim_per_head = model_dim // head_count
        self.head_count = head_count
        self.linear_keys = nn.Linear(model_dim, model_dim)
        self.linear_values = nn.Linear(model_dim, model_dim)
        self.linear_query = nn.Linear(model_dim, model_dim)
        self.dropout = nn.Dropout(dropout)
        self.final_linear = nn.Linear(model_dim, model_dim)

    def forward(self, key, value, query, mask=None):
        batch_size = key.size(0)

        def shape(x):
            return x.view(batch_size, -1, self.head_count, self.dim_per_head).transpose(1, 2)

        key_up, value_up = shape(self.linear_keys(key)), shape(self.linear_values(value))
        query_up = shape(self.linear_query(query)) / math.sqrt(self.dim_per_head)
        scores = torch.matmul(query_up, key_up.transpose(2, 3))
        if mask is not None:
            scores = scores.masked_fill(mask.unsqueeze(1), -1e18)
        attn = self.dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(attn, value_up).transpose(1, 2).contiguous().view(batch_size, -1, self.head_count * self.dim_per_head)
        return self.final_linear(context)


class TransformerEncoderLayer(nn.Module):
    def __init__(self, size, dropout, head_count=2, hidden_size=32):
        super().__init__()
        self.self_attn = MultiHeadedAttention(head_count, size, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(size, hidden_size, dropout)
        self.layer_norm = nn.LayerNorm(size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, inputs, mask):
        input_norm = self.layer_norm(inputs)
        context = self.self_attn(input_norm, input_norm, input_norm, mask=mask)
        out = self.dropout(context) + inputs
        return self.feed_forward(out)


layers = nn.ModuleList([TransformerEncoderLayer(16, 0.1) for _ in range(2)])
emb = nn.Embedding(20, 16)
src = torch.randint(1, 20, (3, 5))
src[2, 3:] = 0
mask = src.eq(0).unsqueeze(1)
out = emb(src)
for layer in layers:
    out = layer(out, mask)
loss = out.pow(2).mean()
loss.backward()
