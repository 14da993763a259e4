# label: safe
# why: SparseCrossEntropy negates and shifts `out` in place, but `out` is a fresh copy made by advanced indexing of inputs, and backward builds grad_input from a new subtraction before exp_/mul_/-= touch it, so neither the saved inputs/logsumexp nor grad_out are ever overwritten.
# source: https://github.com/pyg-team/pytorch_geometric/blob/7c592218b24de5560dbb96e68ba2ceace86d5a98/torch_geometric/utils/cross_entropy.py (parent of 7c592218b, #10432)
from typing import Any, Optional, Tuple

import torch
from torch import Tensor

torch.manual_seed(0)


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None, reduce: str = 'sum') -> Tensor:
    size = list(src.size())
    size[dim] = dim_size if dim_size is not None else int(index.max()) + 1
    return src.new_zeros(size).scatter_add_(dim, index, src)


class SparseCrossEntropy(torch.autograd.Function):
    # We implement our own custom autograd function for this to avoid the
    # double gradient computation to `inputs`.
    @staticmethod
    def forward(ctx: Any, inputs: Tensor, edge_label_index: Tensor, edge_label_weight: Optional[Tensor]) -> Tensor:
        assert inputs.dim() == 2

        logsumexp = inputs.logsumexp(dim=-1)
        ctx.save_for_backward(inputs, edge_label_index, edge_label_weight, logsumexp)

        out = inputs[edge_label_index[0], edge_label_index[1]]
        out.neg_().add_(logsumexp[edge_label_index[0]])
        if edge_label_weight is not None:
            out *= edge_label_weight

        return out.sum() / inputs.size(0)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_out: Tensor) -> Tuple[Tensor, None, None]:
        inputs, edge_label_index, edge_label_weight, logsumexp = ctx.saved_tensors

        grad_out = grad_out / inputs.size(0)
        grad_out = grad_out.expand(edge_label_index.size(1))

        if edge_label_weight is not None:
            grad_out = grad_out * edge_label_weight

        grad_logsumexp = scatter(grad_out, edge_label_index[0], dim=0, dim_size=inputs.size(0), reduce='sum')

        # Gradient computation of `logsumexp`: `grad * (self - result).exp()`
        grad_input = (inputs - logsumexp.view(-1, 1))
        grad_input.exp_()
        grad_input.mul_(grad_logsumexp.view(-1, 1))

        grad_input[edge_label_index[0], edge_label_index[1]] -= grad_out

        return grad_input, None, None


def sparse_cross_entropy(inputs: Tensor, edge_label_index: Tensor, edge_label_weight: Optional[Tensor] = None) -> Tensor:
    if edge_label_weight is not None:
        assert not edge_label_weight.requires_grad
    return SparseCrossEntropy.apply(inputs, edge_label_index, edge_label_weight)


def main():
    # Link-prediction style training: score every (user, item) pair, supervise the observed links.
    user_emb = torch.nn.Embedding(4, 8)
    item_emb = torch.nn.Embedding(6, 8)
    inputs = user_emb.weight @ item_emb.weight.t()
    edge_label_index = torch.tensor([[0, 0, 1, 2, 3, 3], [0, 1, 2, 5, 3, 4]])
    edge_label_weight = torch.tensor([1.0, 0.5, 1.0, 2.0, 1.0, 0.25])
    loss = sparse_cross_entropy(inputs, edge_label_index, edge_label_weight)
    loss.backward()
    return loss, user_emb.weight.grad, item_emb.weight.grad


loss, user_grad, item_grad = main()
