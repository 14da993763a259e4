# label: hazard raises
# why: the reduction writes each partial product into a slot of one shared buffer, but torch.mul saved views of earlier slots for backward, so the later slot writes bump the buffer's version
# source: https://github.com/pytorch/pytorch/issues/74874
import torch
from torch import Tensor

torch.manual_seed(0)


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    partial = op(tensor[0], tensor[1])
    tensor[2] = partial  # <-- IPL001: mul saved tensor[0]/tensor[1] (views of the buffer) and this write bumps the buffer
    total = op(tensor[2], tensor[3])
    tensor[4] = total  # <-- IPL001: mul saved tensor[2] (a view of the buffer) and this write bumps it again
    return tensor[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]

out = reduce(*inputs, op=torch.mul)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
g0, g1, g2 = grad
