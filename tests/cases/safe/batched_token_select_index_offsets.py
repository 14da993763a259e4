# label: safe
# why: += and clamp_ act on integer index tensors before they are used for indexing; they carry no gradient
import torch
import torch.nn as nn

torch.manual_seed(0)


def batch_index_select(x, idx):
    B, N, C = x.shape
    offset = torch.arange(B, dtype=torch.long).view(B, 1) * N
    idx = idx + offset
    return x.reshape(B * N, C)[idx.reshape(-1)].reshape(B, -1, C)


proj = nn.Linear(4, 4)
scorer = nn.Linear(4, 1)
B, N, K = 3, 6, 2

tokens = proj(torch.randn(B, N, 4))
scores = scorer(tokens).squeeze(-1)
keep = scores.detach().topk(K, dim=1).indices
keep += 1
keep.clamp_(max=N - 1)
keep_sorted, _ = keep.sort(dim=1)
selected = batch_index_select(tokens, keep_sorted)
flat_keep = keep_sorted.clone()
flat_keep += torch.arange(B).view(B, 1) * N
gathered_scores = scores.reshape(-1)[flat_keep.reshape(-1)]
loss = selected.pow(2).mean() + gathered_scores.sigmoid().mean()
loss.backward()
proj_grad = proj.weight.grad
scorer_grad = scorer.weight.grad
