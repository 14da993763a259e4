# label: hazard raises
# why: scatter_ overwrites the amax result that amax saved for backward, and the top-k values built from it reach the loss, so backward must unpack amax's saved output
import torch

torch.manual_seed(0)


def pick_blocks(scores: torch.Tensor, local: torch.Tensor, k: int) -> torch.Tensor:
    block_scores = scores.amax(dim=-1)
    block_scores.scatter_(-1, local, 0.0)  # <-- IPL001
    top_scores, top_idx = block_scores.topk(k, dim=-1)
    return top_scores


scores = torch.randn(2, 5, 4, requires_grad=True)
loss = pick_blocks(scores, torch.zeros(2, 1, dtype=torch.long), 2).sum()
loss.backward()
