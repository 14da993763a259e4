# label: safe
# why: x * 2 keeps no copy of x, max along a dim keeps only indices, advanced indexing gathers a copy, and squeeze_ changes the shape but not the values
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, order: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = self.proj(x)
        doubled = h * 2
        h.mul_(3)
        scores = self.proj(x) * 1.0
        shifted = scores - torch.max(scores, dim=-1, keepdim=True)[0]
        scores.masked_fill_(scores > 10, 10.0)
        picked = scores[order]
        picked.mul_(0.5)
        labels = (order + 1).unsqueeze(-1)
        for t in (labels,):
            if t.dim() > 1:
                t.squeeze_(-1)
        return doubled, shifted, picked, labels.float()


block = Block()
x = torch.randn(3, 4, requires_grad=True)
outs = block(x, torch.tensor([2, 0, 1]))
sum(o.sum() for o in outs).backward()
