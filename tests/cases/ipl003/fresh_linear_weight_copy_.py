# label: hazard raises no-twin
# why: a new layer's weight is a leaf that requires grad; copy_ into it outside no_grad raises
import torch
import torch.nn as nn

torch.manual_seed(0)


def widen(layer: nn.Linear) -> nn.Linear:
    wider = nn.Linear(layer.in_features, layer.out_features)
    wider.weight.copy_(layer.weight.detach())  # <-- IPL003
    return wider


widen(nn.Linear(4, 3))
