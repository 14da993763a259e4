# label: safe
# why: x[mask] = 0 writes into the freshly shifted ids (x - vocab_start_idx), not the caller's input_ids, and y[mask] = 0 edits an embedding output that nothing saved, so the in-place writes are harmless
# source: https://github.com/deepseek-ai/DeepSeek-V3/pull/1176
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

world_size = 2


class ParallelEmbedding(nn.Module):
    def __init__(self, vocab_size, dim, rank):
        super().__init__()
        self.vocab_size = vocab_size
        self.dim = dim
        assert vocab_size % world_size == 0, f"Vocabulary size must be divisible by world size (world_size={world_size})"
        self.part_vocab_size = vocab_size // world_size
        self.vocab_start_idx = rank * self.part_vocab_size
        self.vocab_end_idx = self.vocab_start_idx + self.part_vocab_size
        self.weight = nn.Parameter(torch.randn(self.part_vocab_size, self.dim) * 0.02)

    def forward(self, x):
        if world_size > 1:
            mask = (x < self.vocab_start_idx) | (x >= self.vocab_end_idx)
            x = x - self.vocab_start_idx
            x[mask] = 0
        y = F.embedding(x, self.weight)
        if world_size > 1:
            y[mask] = 0
        return y


def all_reduce(partials):
    out = partials[0]
    for p in partials[1:]:
        out = out + p
    return out


class Transformer(nn.Module):
    def __init__(self, vocab_size=16, dim=8):
        super().__init__()
        self.embed = nn.ModuleList([ParallelEmbedding(vocab_size, dim, rank) for rank in range(world_size)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, tokens):
        h = all_reduce([shard(tokens) for shard in self.embed])
        return self.head(self.norm(h))


model = Transformer()
input_ids = torch.randint(0, 16, (2, 6))
logits = model(input_ids)
labels = input_ids[:, 1:]
loss = F.cross_entropy(logits[:, :-1].reshape(-1, 16), labels.reshape(-1))
loss.backward()
ids_after = input_ids.clone()
