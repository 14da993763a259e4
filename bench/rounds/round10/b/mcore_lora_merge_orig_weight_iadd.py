# label: hazard raises
# why: LoRA merge adds the delta into the base weight Parameter with += outside no_grad; the weight is a leaf that requires grad, so torch refuses the in-place add.
# source: https://github.com/modelscope/mcore-bridge/pull/98
import torch
import torch.nn as nn

torch.manual_seed(0)


class LoraParallelLinear(nn.Module):
    def __init__(self, in_features, out_features, r=2, lora_alpha=4):
        super().__init__()
        self.base_layer = nn.Linear(in_features, out_features, bias=False)
        self.lora_A = nn.ModuleDict({"default": nn.Linear(in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, out_features, bias=False)})
        nn.init.normal_(self.lora_B["default"].weight, std=0.1)
        self.scaling = {"default": lora_alpha / r}
        self.merged_adapters = []

    def get_base_layer(self):
        return self.base_layer

    def get_delta_weights(self, adapter):
        weight_A = self.lora_A[adapter].weight
        weight_B = self.lora_B[adapter].weight
        return [(weight_B @ weight_A) * self.scaling[adapter]]

    def merge(self, safe_merge=False, adapter_names=None):
        if adapter_names is None:
            adapter_names = ["default"]
        for active_adapter in adapter_names:
            if active_adapter in self.lora_A.keys():
                base_layer = self.get_base_layer()
                orig_weights = [base_layer.weight]
                if safe_merge:
                    orig_weights = [weight.data.clone() for weight in orig_weights]
                delta_weights = self.get_delta_weights(active_adapter)
                for orig_weight, delta_weight in zip(orig_weights, delta_weights):
                    orig_weight += delta_weight  # <-- IPL003: base weight is a leaf Parameter requiring grad
                self.merged_adapters.append(active_adapter)

    def forward(self, x):
        result = self.base_layer(x)
        if not self.merged_adapters:
            for adapter in self.lora_A.keys():
                result = result + self.lora_B[adapter](self.lora_A[adapter](x)) * self.scaling[adapter]
        return result


layer = LoraParallelLinear(6, 4)
x = torch.randn(3, 6)
before = layer(x)
layer.merge()
after = layer(x)
