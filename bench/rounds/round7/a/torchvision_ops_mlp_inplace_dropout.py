# label: hazard raises no-twin
# why: ops.MLP defaults to inplace=True, so the in-place Dropout right after the in-place ReLU overwrites the ReLU result that ReLU saved for backward.
# source: https://github.com/pytorch/vision/issues/7174
from typing import Callable, List, Optional

import torch

torch.manual_seed(0)


class MLP(torch.nn.Sequential):
    def __init__(
        self,
        in_channels: int,
        hidden_channels: List[int],
        norm_layer: Optional[Callable[..., torch.nn.Module]] = None,
        activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
        inplace: Optional[bool] = True,
        bias: bool = True,
        dropout: float = 0.0,
    ):
        params = {} if inplace is None else {"inplace": inplace}

        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(torch.nn.Dropout(dropout, **params))  # <-- IPL001: in-place dropout on the saved output of the in-place ReLU
            in_dim = hidden_dim

        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(torch.nn.Dropout(dropout, **params))

        super().__init__(*layers)


head = MLP(3, [3, 3], dropout=0.5)
x = torch.rand(4, 3)
out = head(x)
out.sum().backward()
