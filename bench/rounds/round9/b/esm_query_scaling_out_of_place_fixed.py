# label: safe
# why: after the fix the ESM attention scales the query out of place (query_layer = query_layer * scale), so the view returned by the quantized matmul Function is never written.
# source: https://github.com/huggingface/transformers/pull/26454
import torch
import torch.nn as nn

torch.manual_seed(0)


class MatMul4Bit(torch.autograd.Function):
    """Stand-in for bitsandbytes' MatMul4Bit: returns its result as a view."""

    @staticmethod
    def forward(ctx, A, W):
        ctx.save_for_backward(A, W)
        out = A.reshape(-1, A.shape[-1]) @ W.t()
        return out.view(*A.shape[:-1], W.shape[0])

    @staticmethod
    def backward(ctx, grad_output):
        A, W = ctx.saved_tensors
        g = grad_output.reshape(-1, grad_output.shape[-1])
        return (g @ W).view_as(A), g.t() @ A.reshape(-1, A.shape[-1])


class Linear4bit(nn.Linear):
    def forward(self, x):
        return MatMul4Bit.apply(x, self.weight)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, q, k):
        t = torch.arange(q.shape[-2]).type_as(self.inv_freq)
        emb = torch.cat((torch.outer(t, self.inv_freq),) * 2, dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class EsmSelfAttention(nn.Module):
    def __init__(self, hidden_size=8, num_attention_heads=2):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = hidden_size // num_attention_heads
        self.all_head_size = hidden_size
        self.query = Linear4bit(hidden_size, self.all_head_size, bias=False)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)
        self.rotary_embeddings = RotaryEmbedding(dim=self.attention_head_size)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        # ESM scales the query down by sqrt(head_dim) instead of the attention logits
        query_layer = query_layer * self.attention_head_size ** -0.5
        query_layer, key_layer = self.rotary_embeddings(query_layer, key_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = attention_scores.softmax(dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer).permute(0, 2, 1, 3).contiguous()
        return context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))


attn = EsmSelfAttention()
hidden_states = torch.randn(2, 5, 8)
context = attn(hidden_states)
loss = context.pow(2).mean()
loss.backward()
