# label: hazard raises
# why: exp saves its output, and the manual normalisation divides that same tensor in place.
import torch
import torch.nn as nn

torch.manual_seed(0)


def stable_softmax(logits, dim=-1):
    e = (logits - logits.max(dim=dim, keepdim=True).values).exp()
    e.div_(e.sum(dim=dim, keepdim=True))  # <-- IPL001: exp saved e
    return e


lin = nn.Linear(7, 4)
x = torch.randn(3, 7)
target = torch.tensor([1, 0, 3])
probs = stable_softmax(lin(x))
loss = -torch.log(probs[torch.arange(3), target]).mean()
loss.backward()
