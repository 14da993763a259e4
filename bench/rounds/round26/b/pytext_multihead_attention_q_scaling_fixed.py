# label: safe
# why: the fix scales q out of place (q = self.scaling * q), so the chunk view of the projection is never written.
# source: https://github.com/facebookresearch/pytext/commit/53594bc0a9b15638a8daddbed06d46978a527b95
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class MultiheadSelfAttention(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int, scaling: float = 0.125, dropout: float = 0.0):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = scaling
        self.dropout = nn.Dropout(dropout)
        self.input_projection = nn.Linear(embed_dim, 3 * embed_dim)
        self.output_projection = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, key_padding_mask):
        target_length, batch_size, embed_dim = query.size()
        mask_batch_size, source_length = key_padding_mask.size()
        assert embed_dim == self.embed_dim

        # input projection
        projection = self.input_projection(query)
        q, k, v = projection.chunk(3, dim=-1)
        q = self.scaling * q

        batch_heads = batch_size * self.num_heads

        q = q.contiguous().view(-1, batch_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, batch_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, batch_heads, self.head_dim).transpose(0, 1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        attn_weights = attn_weights.view(batch_size, self.num_heads, target_length, source_length)
        attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), float("-inf"))
        attn_weights = attn_weights.view(batch_heads, target_length, source_length)
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)
        attn_weights = self.dropout(attn_weights)

        attn = torch.bmm(attn_weights, v)
        attn = attn.transpose(0, 1).contiguous().view(target_length, batch_size, embed_dim)
        attn = self.output_projection(attn)
        return attn


def main():
    attention = MultiheadSelfAttention(embed_dim=8, num_heads=2)
    tokens_embedded = torch.randn(5, 3, 8)
    key_padding_mask = torch.zeros(3, 5, dtype=torch.bool)
    key_padding_mask[0, -1] = True
    out = attention(tokens_embedded, key_padding_mask)
    loss = out.pow(2).mean()
    loss.backward()
    return out.detach(), attention.input_projection.weight.grad


attn_out, input_projection_grad = main()
