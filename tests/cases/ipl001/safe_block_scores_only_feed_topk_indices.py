# label: safe
# why: scatter_ overwrites the amax result that amax saved, but only top-k indices (and a comparison of the top-k values) leave the function, so no backward ever reaches amax
import torch

torch.manual_seed(0)


def pick_blocks(scores: torch.Tensor, local: torch.Tensor, k: int) -> torch.Tensor:
    block_scores = scores.amax(dim=-1)
    block_scores.scatter_(-1, local, float("inf"))
    top_scores, top_idx = block_scores.topk(k, dim=-1)
    return top_idx.masked_fill(top_scores == float("-inf"), -1)


scores = torch.randn(2, 5, 4, requires_grad=True)
values = torch.randn(2, 5, requires_grad=True)
chosen = pick_blocks(scores, torch.zeros(2, 1, dtype=torch.long), 2)
loss = values.gather(-1, chosen % 5).sum() + scores.mean()
loss.backward()
