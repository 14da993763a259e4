# label: hazard raises
# why: learned per-sample curriculum weights come from a sigmoid, and masking them in place overwrites the sigmoid output that was saved for backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CurriculumWeighter(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(n))

    def forward(self, idx, epoch, losses):
        w = torch.sigmoid(self.logits[idx])
        easy = (losses.detach() < 1.0 + 0.1 * epoch).float()
        w *= easy  # <-- IPL001
        return w


N = 10
model = nn.Linear(3, 2)
weighter = CurriculumWeighter(N)
x = torch.randn(N, 3)
y = torch.randint(0, 2, (N,))
idx = torch.arange(N)

per_sample = F.cross_entropy(model(x), y, reduction="none")
w = weighter(idx, epoch=2, losses=per_sample)
loss = (w * per_sample).sum() / w.sum().clamp(min=1e-6)
loss.backward()
