# label: safe
# why: the same scratch-buffer reduction from the issue with op=torch.add: addition saves none of its inputs, so the later slot writes do not disturb backward.
# source: https://github.com/pytorch/pytorch/issues/74806
import torch
from torch import Tensor

torch.manual_seed(0)


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    tensor[2] = op(tensor[0], tensor[1])
    tensor[4] = op(tensor[2], tensor[3])
    return tensor[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]
out = reduce(*inputs, op=torch.add)
grad_out = torch.randn_like(out)
grads = torch.autograd.grad(out, inputs, grad_out)
