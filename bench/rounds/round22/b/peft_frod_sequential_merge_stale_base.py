# label: hazard silent no-twin
# why: FRoD's delta is frod_weight - W computed from the live base_layer.weight, but merge(["A"]) has already added A's delta into base_layer.weight.data in place, so a later separate merge(["B"]) reads the merged weight as its "base" and the result silently depends on merge order instead of matching a single combined merge.
# source: https://github.com/huggingface/peft/commit/0e7004d1ac49e6e40ec7f460026d3d6596447f5f (FIX PEANuT and FRoD sequential merge() calls diverging from combined merge; pre-fix src/peft/tuners/frod/layer.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def transpose(weight, fan_in_fan_out):
    return weight.T if fan_in_fan_out else weight


class FrodLayer(nn.Module):
    def __init__(self, base_layer, r=4):
        super().__init__()
        self.base_layer = base_layer
        self.fan_in_fan_out = False
        self.r = r
        self.frod_U, self.frod_V = {}, {}
        self.frod_s_indices, self.frod_s_size = {}, {}
        self.frod_lambda_s_values = nn.ParameterDict()
        self.frod_lambda_l = nn.ParameterDict()
        self.merged_adapters = []
        self._frod_merged_delta = {}

    def get_base_layer(self):
        return self.base_layer

    def update_layer(self, adapter_name):
        W = self.base_layer.weight.detach()
        U, S, Vh = torch.linalg.svd(W, full_matrices=False)
        self.frod_U[adapter_name] = U[:, : self.r] * S[: self.r]
        self.frod_V[adapter_name] = Vh[: self.r].T
        self.frod_s_indices[adapter_name] = torch.tensor([[0, 1, 2], [1, 2, 3]])
        self.frod_s_size[adapter_name] = torch.tensor([self.r, self.r])
        self.frod_lambda_s_values[adapter_name] = nn.Parameter(0.1 * torch.randn(3))
        self.frod_lambda_l[adapter_name] = nn.Parameter(1.0 + 0.1 * torch.randn(self.r))

    def _get_frod_tensors(self, adapter):
        indices = self.frod_s_indices[adapter]
        size = tuple(int(d) for d in self.frod_s_size[adapter].tolist())
        S_sparse = torch.sparse_coo_tensor(indices, self.frod_lambda_s_values[adapter], size).coalesce()
        return self.frod_U[adapter], self.frod_V[adapter], S_sparse, self.frod_lambda_l[adapter]

    def get_delta_weight(self, adapter):
        weight = self.get_base_layer().weight
        base_weight = transpose(weight, self.fan_in_fan_out)
        U, V, S_sparse, lambda_l = self._get_frod_tensors(adapter)
        frod_weight = U @ (S_sparse.to_dense() + torch.diag_embed(lambda_l)) @ V.T
        return transpose(frod_weight - base_weight, self.fan_in_fan_out)

    def merge(self, adapter_names):
        base_layer = self.get_base_layer()
        adapter_deltas = []
        # FRoD deltas are computed against the current base weight, so compute all deltas before mutating it.
        for active_adapter in adapter_names:
            if active_adapter in self.frod_lambda_l.keys():
                adapter_deltas.append((active_adapter, self.get_delta_weight(active_adapter).detach()))
        for active_adapter, delta_weight in adapter_deltas:
            base_layer.weight.data += delta_weight  # <-- IPL002
            self._frod_merged_delta[active_adapter] = delta_weight
            self.merged_adapters.append(active_adapter)


def build():
    torch.manual_seed(1)
    layer = FrodLayer(nn.Linear(8, 6))
    layer.update_layer("A")
    layer.update_layer("B")
    return layer


def main():
    combined = build()
    combined.merge(["A", "B"])
    sequential = build()
    sequential.merge(["A"])
    sequential.merge(["B"])
    x = torch.randn(3, 8)
    out_combined = combined.base_layer(x)
    out_sequential = sequential.base_layer(x)
    return out_combined, out_sequential, sequential.base_layer.weight.detach().clone()


out_combined, out_sequential, merged_weight = main()
