# label: safe no-twin
# why: pruning helpers switch requires_grad off, copy the kept weights in place, and switch it back on; torch accepts the copy_
import torch
import torch.nn as nn

torch.manual_seed(0)


def prune_linear(layer: nn.Linear, index: torch.Tensor) -> nn.Linear:
    kept = layer.weight.index_select(0, index).detach().clone()
    new_layer = nn.Linear(layer.in_features, len(index))
    new_layer.weight.requires_grad = False
    new_layer.weight.copy_(kept.contiguous())
    new_layer.weight.requires_grad = True
    new_layer.bias.requires_grad = False
    new_layer.bias.copy_(layer.bias[index].detach())
    new_layer.bias.requires_grad = True
    return new_layer


small = prune_linear(nn.Linear(4, 6), torch.tensor([0, 2, 5]))
small(torch.randn(2, 4)).sum().backward()
