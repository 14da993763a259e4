# label: safe
# why: `bb[a != 0] = torch.min(bb[a != 0], c[a != 0])` only writes into bb after the advanced-index gather produced fresh copies for torch.min; bb itself is not saved, so current PyTorch backpropagates it correctly (the 1.2 error reported here was fixed).
# source: https://github.com/pytorch/pytorch/issues/24853
import torch

torch.manual_seed(0)

b0 = torch.tensor(5.0, requires_grad=True)
a = torch.Tensor([1, 0, 0])
b = torch.zeros(3, requires_grad=True)
c = torch.ones(3, requires_grad=True)

bb = b + 1

bb[a != 0] = torch.min(bb[a != 0], c[a != 0])

d = torch.sum(bb)
d.backward()
