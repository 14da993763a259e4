# label: hazard silent
# why: the token-dropping helper zeroes the dropped rows of its argument in place, so the caller's full-token residual path also loses them
import torch
import torch.nn as nn

torch.manual_seed(0)


def drop_low_score_tokens(tokens, scores, keep_ratio=0.5):
    n_keep = max(1, int(tokens.shape[1] * keep_ratio))
    keep_idx = scores.topk(n_keep, dim=1).indices
    keep = torch.zeros_like(scores, dtype=torch.bool).scatter(1, keep_idx, True)
    tokens[~keep] = 0.0  # <-- IPL004
    return tokens


embed = nn.Linear(6, 8)
scorer = nn.Linear(8, 1)
mixer = nn.Linear(8, 8)

patches = torch.randn(2, 5, 6)
tokens = embed(patches)
scores = scorer(tokens.detach()).squeeze(-1)
kept = drop_low_score_tokens(tokens, scores)
mixed = mixer(kept)
out = tokens + mixed
pooled = out.mean(1)
loss = pooled.pow(2).sum()
loss.backward()
embed_grad = embed.weight.grad
