# label: safe
# why: same slot-writing reduction but with torch.add, whose backward saves nothing, so overwriting later slots of the shared buffer is harmless
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
    tensor[2] = partial
    total = op(tensor[2], tensor[3])
    tensor[4] = total
    return tensor[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]

out = reduce(*inputs, op=torch.add)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
g0, g1, g2 = grad
