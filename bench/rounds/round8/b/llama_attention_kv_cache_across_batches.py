# label: hazard raises no-twin
# why: the k/v cache buffers are written in place with graph-carrying keys; on the next training batch the cache still holds the first (freed) graph, so backward walks into it again
# source: https://github.com/meta-llama/llama-cookbook/issues/247
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModelArgs:
    dim = 8
    n_heads = 2
    max_batch_size = 2
    max_seq_len = 6


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.dim, bias=False)
        self.wk = nn.Linear(args.dim, args.dim, bias=False)
        self.wv = nn.Linear(args.dim, args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)
        self.cache_k = torch.zeros(args.max_batch_size, args.max_seq_len, self.n_heads, self.head_dim)
        self.cache_v = torch.zeros(args.max_batch_size, args.max_seq_len, self.n_heads, self.head_dim)

    def forward(self, x, start_pos):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)

        self.cache_k = self.cache_k.to(xq)
        self.cache_v = self.cache_v.to(xq)
        self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk  # <-- IPL001: cache keeps the graph of an earlier batch
        self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv  # <-- IPL001: cache keeps the graph of an earlier batch

        keys = self.cache_k[:bsz, : start_pos + seqlen]
        values = self.cache_v[:bsz, : start_pos + seqlen]
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / self.head_dim ** 0.5
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


attn = Attention(ModelArgs())
optimizer = torch.optim.SGD(attn.parameters(), lr=0.1)
losses = []
for step in range(2):
    batch = torch.randn(2, 3, 8)
    out = attn(batch, start_pos=0)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
