# label: safe
# why: the padded scores are set to the constructor's default of minus infinity through .data; softmax gives them exactly zero weight and zero gradient, so hiding the fill from autograd changes nothing.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Scorer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, 1, bias=False)

    def forward(self, q, memory):
        return self.v(torch.tanh(self.query(q).unsqueeze(1) + memory)).squeeze(-1)


class Attention(nn.Module):
    def __init__(self, scorer, mask_value=-float("inf")):
        super().__init__()
        self.scorer = scorer
        self.mask_value = mask_value

    def forward(self, q, memory, mask):
        scores = self.scorer(q, memory)
        scores.data.masked_fill_(mask, self.mask_value)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights.unsqueeze(1), memory).squeeze(1)


attention = Attention(Scorer(4))
memory = torch.randn(2, 5, 4, requires_grad=True)
q = torch.randn(2, 4)
mask = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])
context = attention(q, memory, mask)
context.sum().backward()
