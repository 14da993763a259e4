# label: hazard raises
# why: hand-written softmax normalises exp() output in place with /=, but ExpBackward saved that output
import torch
import torch.nn as nn

torch.manual_seed(0)

scorer = nn.Linear(4, 5)
x = torch.randn(3, 4)

w = torch.exp(scorer(x))
w /= w.sum(dim=-1, keepdim=True)  # <-- IPL001
loss = (w * torch.arange(5.0)).sum()
loss.backward()
