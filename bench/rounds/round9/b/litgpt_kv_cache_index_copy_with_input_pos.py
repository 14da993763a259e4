# label: hazard raises
# why: when training through the KV-cache path, index_copy_ writes each chunk's keys/values into cache buffers that earlier attention matmuls saved, and the position tensor that IndexCopyBackward saved is then advanced in place with input_pos.add_(1).
# source: https://github.com/gpt-omni/mini-omni/issues/111
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class KVCache(nn.Module):
    def __init__(self, k_shape, v_shape):
        super().__init__()
        self.register_buffer("k", torch.zeros(k_shape), persistent=False)
        self.register_buffer("v", torch.zeros(v_shape), persistent=False)

    def forward(self, input_pos, k, v):
        # move the buffer to the activation dtype for when AMP is used
        self.k = self.k.to(k.dtype)
        self.v = self.v.to(v.dtype)
        # update the cache
        k = self.k.index_copy_(2, input_pos, k)  # <-- IPL001: cache buffer saved by the previous step's q @ k^T
        v = self.v.index_copy_(2, input_pos, v)  # <-- IPL001: cache buffer saved by the previous step's attn @ v
        return k, v


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd=8, n_head=2, block_size=8):
        super().__init__()
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.attn = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.kv_cache = KVCache((1, n_head, block_size, self.head_size), (1, n_head, block_size, self.head_size))

    def forward(self, x, mask, input_pos):
        B, T, C = x.size()
        q, k, v = self.attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        if input_pos is not None:
            k, v = self.kv_cache(input_pos, k, v)
        att = (q @ k.transpose(-2, -1)) * self.head_size ** -0.5
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y)


class GPT(nn.Module):
    def __init__(self, vocab=16, n_embd=8, block_size=8):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab, n_embd)
        self.attn = CausalSelfAttention(n_embd, block_size=block_size)
        self.lm_head = nn.Linear(n_embd, vocab)
        self.register_buffer("mask_cache", torch.ones(block_size, block_size, dtype=torch.bool).tril(), persistent=False)

    def forward(self, idx, input_pos=None):
        mask = self.mask_cache.index_select(0, input_pos)[None, None] if input_pos is not None else self.mask_cache[: idx.size(1), : idx.size(1)]
        x = self.wte(idx)
        x = x + self.attn(x, mask, input_pos)
        return self.lm_head(x)


model = GPT()
tokens = torch.tensor([[1, 5, 7, 3, 9]])
input_pos = torch.tensor([0])
losses = []
for t in range(3):
    logits = model(tokens[:, t : t + 1], input_pos)
    losses.append(F.cross_entropy(logits[:, -1], tokens[:, t + 1]))
    input_pos = input_pos.add_(1)  # <-- IPL001: input_pos was saved by IndexCopyBackward of the cache update
loss = torch.stack(losses).mean()
loss.backward()
