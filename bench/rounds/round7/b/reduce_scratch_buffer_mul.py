# label: hazard raises no-twin
# why: with op=torch.mul the product saves the slots tensor[0], tensor[1] (views of the scratch buffer), and the next slot assignments into the same buffer bump its version before backward.
# source: https://github.com/pytorch/pytorch/issues/74806
import torch
from torch import Tensor

torch.manual_seed(0)


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    tensor[2] = op(tensor[0], tensor[1])  # <-- IPL001: writes the buffer whose slots mul just saved
    tensor[4] = op(tensor[2], tensor[3])  # <-- IPL001: writes the buffer again after the second mul saved tensor[2], tensor[3]
    return tensor[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]
out = reduce(*inputs, op=torch.mul)
grad_out = torch.randn_like(out)
grads = torch.autograd.grad(out, inputs, grad_out)
