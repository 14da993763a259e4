# label: safe no-twin
# why: after the fix merge() accumulates the adapter deltas in place into private clones (new_weight/new_bias seeded from w0/b0), checks them for non-finite values, and only then rebinds base_layer.weight.data, so a refused safe_merge leaves the base layer untouched.
# source: https://github.com/huggingface/peft/commit/52271b9e32a981ebcf66d65a8a9a171ab3fcdc0b (FIX GLoRA safe_merge mutating the base layer before the isfinite check, #3411)
import math
from typing import Optional

import torch
from torch import nn

torch.manual_seed(0)


class GloraLoraPath(nn.Module):
    def __init__(self, out_features, in_features, r, init_weights: bool = True):
        super().__init__()
        self.Xd = nn.Parameter(torch.zeros(out_features, r))
        self.Xu = nn.Parameter(torch.zeros(r, in_features))
        nn.init.kaiming_uniform_(self.Xu, a=math.sqrt(5))
        if not init_weights:
            nn.init.kaiming_uniform_(self.Xd, a=math.sqrt(5))

    def forward(self):
        return self.Xd @ self.Xu


class GloraVectorPath(nn.Module):
    def __init__(self, features, is_column=True, init_weights: bool = True):
        super().__init__()
        shape = (features, 1) if is_column else (features,)
        self.X = nn.Parameter(torch.zeros(*shape))
        if not init_weights:
            nn.init.normal_(self.X, std=0.02)

    def forward(self):
        return self.X


class GloraLinear(nn.Module):
    def __init__(self, base_layer: nn.Linear, adapter_name="default", r=4, init_weights=False):
        super().__init__()
        self.base_layer = base_layer
        self.in_features, self.out_features = base_layer.in_features, base_layer.out_features
        base_layer.weight.requires_grad = False
        base_layer.bias.requires_grad = False
        self.glora_A = nn.ModuleDict({adapter_name: GloraLoraPath(self.out_features, self.in_features, r, init_weights)})
        self.glora_B = nn.ModuleDict({adapter_name: GloraLoraPath(self.out_features, self.in_features, r, init_weights)})
        self.glora_C = nn.ModuleDict({adapter_name: GloraVectorPath(self.in_features, True, init_weights)})
        self.glora_D = nn.ModuleDict({adapter_name: GloraVectorPath(self.out_features, False, init_weights)})
        self.glora_E = nn.ModuleDict({adapter_name: GloraVectorPath(self.out_features, False, init_weights)})
        self.merged_adapters: list[str] = []

    def get_base_layer(self):
        return self.base_layer

    @property
    def weight(self):
        return self.base_layer.weight

    @property
    def bias(self):
        return self.base_layer.bias

    def merge(self, safe_merge: bool = False, adapter_names: Optional[list[str]] = None) -> None:
        all_adapters = list(adapter_names or self.glora_A.keys())
        base_layer = self.get_base_layer()
        weight = self.weight
        bias = self.bias
        device, dtype = weight.device, weight.dtype

        w0 = weight.data.clone()
        b0 = bias.data.clone() if bias is not None else None

        # Accumulate into separate clones instead of mutating the base layer directly, so that if
        # safe_merge detects non-finite values below, the base layer's weights/bias are untouched.
        new_weight = w0.clone()
        new_bias = b0.clone() if b0 is not None else None

        for adapter_name in all_adapters:
            A = self.glora_A[adapter_name]().to(device=device, dtype=dtype)
            B = self.glora_B[adapter_name]().to(device=device, dtype=dtype)
            new_weight += w0 * A + B
            if b0 is not None:
                C = self.glora_C[adapter_name]().to(device=device, dtype=dtype)
                D = self.glora_D[adapter_name]().to(device=device, dtype=dtype)
                E = self.glora_E[adapter_name]().to(device=device, dtype=dtype)
                new_bias += b0 * D + E + torch.matmul(w0, C).squeeze(-1)

        if safe_merge:
            if not torch.isfinite(new_weight).all():
                raise ValueError(
                    f"NaNs detected in the merged weights. The adapter {', '.join(all_adapters)} seems to be broken")
            if new_bias is not None and not torch.isfinite(new_bias).all():
                raise ValueError(
                    f"NaNs detected in the merged weights. The adapter {', '.join(all_adapters)} seems to be broken")

        base_layer.weight.data = new_weight
        if new_bias is not None:
            base_layer.bias.data = new_bias

        for adapter_name in all_adapters:
            self.merged_adapters.append(adapter_name)

    def forward(self, x):
        # adapters disabled / not merged: plain base layer
        return self.base_layer(x)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin0 = nn.Linear(10, 20)
        self.relu = nn.ReLU()
        self.lin1 = nn.Linear(20, 2)

    def forward(self, X):
        return self.lin1(self.relu(self.lin0(X)))


def main():
    model = MLP()
    model.lin0 = GloraLinear(model.lin0)
    # a corrupted checkpoint / fp16 overflow: one adapter parameter is non-finite
    glora_b = model.lin0.glora_B["default"]
    with torch.no_grad():
        next(glora_b.parameters()).fill_(float("inf"))
    try:
        model.lin0.merge(safe_merge=True)
    except ValueError:
        pass  # safe_merge refused the broken adapter; keep serving the base model
    X = torch.randn(4, 10)
    out = model(X)
    return out, model.lin0.base_layer.weight.detach().clone(), model.lin0.merged_adapters


out, base_weight, merged = main()
