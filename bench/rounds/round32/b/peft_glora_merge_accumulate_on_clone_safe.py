# label: safe no-twin
# why: the fixed GloraLayer.merge reads the base weight through an alias (`w0 = weight.data`) but accumulates every adapter into a clone (`new_weight += w0 * A + B`) and only swaps it in afterwards, so each adapter sees the original weight; the mixed-batch forward writes `result[idx] = ...` into the base output after cloning it, and adapters still train. (no-twin: the twin would turn the `base_layer.weight.data = new_weight` swap into a plain Parameter assignment.)
# source: https://github.com/huggingface/peft/commit/7a493326ac5fa072e9cd6e296b2a7a09547bbeed
import math

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class GloraPath(nn.Module):
    def forward(self):
        raise NotImplementedError


class GloraLoraPath(GloraPath):
    def __init__(self, out_features, in_features, r, init_weights: bool = True):
        super().__init__()
        self.Xd = nn.Parameter(torch.zeros(out_features, r))
        self.Xu = nn.Parameter(torch.zeros(r, in_features))
        self.reset_parameters(init_weights)

    def reset_parameters(self, init_weights: bool = True):
        nn.init.kaiming_uniform_(self.Xu, a=math.sqrt(5))
        if init_weights:
            nn.init.zeros_(self.Xd)
        else:
            nn.init.kaiming_uniform_(self.Xd, a=math.sqrt(5))

    def forward(self):
        return self.Xd @ self.Xu


class GloraVectorPath(GloraPath):
    def __init__(self, features, is_column=True, init_weights: bool = True):
        super().__init__()
        shape = (features, 1) if is_column else (features,)
        self.X = nn.Parameter(torch.zeros(*shape))
        self.reset_parameters(init_weights)

    def reset_parameters(self, init_weights: bool = True):
        if init_weights:
            nn.init.zeros_(self.X)
        else:
            nn.init.kaiming_uniform_(self.X.unsqueeze(0) if self.X.dim() == 1 else self.X, a=math.sqrt(5))

    def forward(self):
        return self.X


class GloraLinear(nn.Module):
    """GLoRA adapter wrapping a dense nn.Linear `base_layer`."""

    def __init__(self, base_layer, adapter_names, r=2, init_weights=False):
        super().__init__()
        self.base_layer = base_layer
        self.in_features = base_layer.in_features
        self.out_features = base_layer.out_features
        base_layer.weight.requires_grad = False
        base_layer.bias.requires_grad = False
        self.glora_A = nn.ModuleDict()
        self.glora_B = nn.ModuleDict()
        self.glora_C = nn.ModuleDict()
        self.glora_D = nn.ModuleDict()
        self.glora_E = nn.ModuleDict()
        self.merged_adapters = []
        self.active_adapters = list(adapter_names)
        for adapter_name in adapter_names:
            self.update_layer(adapter_name, r, init_weights)

    @property
    def weight(self):
        return self.base_layer.weight

    @property
    def bias(self):
        return self.base_layer.bias

    @property
    def merged(self):
        return bool(self.merged_adapters)

    def update_layer(self, adapter_name, r, init_weights):
        self.glora_A[adapter_name] = GloraLoraPath(self.out_features, self.in_features, r, init_weights)
        self.glora_B[adapter_name] = GloraLoraPath(self.out_features, self.in_features, r, init_weights)
        self.glora_C[adapter_name] = GloraVectorPath(self.in_features, is_column=True, init_weights=init_weights)
        self.glora_D[adapter_name] = GloraVectorPath(self.out_features, is_column=False, init_weights=init_weights)
        self.glora_E[adapter_name] = GloraVectorPath(self.out_features, is_column=False, init_weights=init_weights)

    def merge(self, safe_merge: bool = False, adapter_names=None) -> None:
        all_adapters = list(adapter_names)

        base_layer = self.base_layer
        weight = self.weight
        bias = self.bias
        device, dtype = weight.device, weight.dtype

        # Read the original weights directly as the reference for the merge math.
        w0 = weight.data
        b0 = bias.data if bias is not None else None

        # The accumulator must be a separate tensor from `w0`.
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
                raise ValueError("NaNs detected in the merged weights.")
            if new_bias is not None and not torch.isfinite(new_bias).all():
                raise ValueError("NaNs detected in the merged weights.")

        base_layer.weight.data = new_weight
        if new_bias is not None:
            base_layer.bias.data = new_bias

        for adapter_name in all_adapters:
            self.merged_adapters.append(adapter_name)

    def _mixed_batch_forward(self, x, adapter_names):
        result = self.base_layer(x)
        base_result = result.clone()
        unique_adapters = sorted(set(adapter_names))
        sub_batch_indices_list = [
            [i for i, a in enumerate(adapter_names) if a == adapter] for adapter in unique_adapters
        ]
        for i, active_adapter in enumerate(unique_adapters):
            A = self.glora_A[active_adapter]()
            B = self.glora_B[active_adapter]()
            C = self.glora_C[active_adapter]()
            D = self.glora_D[active_adapter]()
            E = self.glora_E[active_adapter]()
            idx = sub_batch_indices_list[i]
            sub_batch = x[idx]
            weight_eff = self.weight + self.weight * A + B
            bias_eff = self.bias + self.bias * D + E + torch.matmul(self.weight, C).squeeze(-1)
            adapted = F.linear(sub_batch, weight_eff, bias=bias_eff)
            result[idx] = result[idx] + (adapted - base_result[idx])
        return result

    def forward(self, x, adapter_names=None):
        if adapter_names is not None:
            return self._mixed_batch_forward(x, adapter_names)
        if self.merged:
            return self.base_layer(x)
        base_result = self.base_layer(x)
        result = base_result
        num_active_adapters = 0
        for active_adapter in self.active_adapters:
            num_active_adapters += 1
            A = self.glora_A[active_adapter]()
            B = self.glora_B[active_adapter]()
            C = self.glora_C[active_adapter]()
            D = self.glora_D[active_adapter]()
            E = self.glora_E[active_adapter]()
            weight_eff = self.weight + self.weight * A + B
            bias_eff = self.bias + self.bias * D + E + torch.matmul(self.weight, C).squeeze(-1)
            adapted = F.linear(x, weight_eff, bias=bias_eff)
            result = result + adapted
        if num_active_adapters > 0:
            result = result - num_active_adapters * base_result
        return result


def main():
    layer = GloraLinear(nn.Linear(6, 4), adapter_names=["a", "b"], r=2, init_weights=False)
    x = torch.randn(5, 6)

    # one training step on a mixed batch (each row routed to one adapter)
    mixed = layer(x, adapter_names=["a", "b", "a", "b", "b"])
    mixed.pow(2).mean().backward()
    grad_a = layer.glora_A["a"].Xd.grad.clone()

    # merge both adapters and compare with the unmerged two-adapter forward
    with torch.no_grad():
        unmerged = layer(x)
        layer.merge(safe_merge=True, adapter_names=["a", "b"])
        merged = layer(x)
    return mixed.detach(), grad_a, unmerged, merged, layer.base_layer.weight.detach().clone()


mixed, grad_a, unmerged, merged, merged_weight = main()
