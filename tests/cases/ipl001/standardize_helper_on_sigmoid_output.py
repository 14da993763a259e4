# label: hazard raises
# why: standardize_ subtracts the mean from its argument in place; the caller passes the sigmoid output that SigmoidBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)


def standardize_(t):
    t.sub_(t.mean(dim=0, keepdim=True))  # <-- IPL001
    return t


head = nn.Linear(5, 3)
x = torch.randn(6, 5)

gates = torch.sigmoid(head(x))
centered = standardize_(gates)
loss = (centered * torch.randn(6, 3)).sum()
loss.backward()
