# label: hazard silent no-twin
# why: LoRAModule keeps _org_lora_up/_org_lora_down as lora_up.weight.data, an alias of the trained parameter, so after optimizer.step() updates the weights in place the PiSSA conversion reads the trained values as the "original" ones and delta_w collapses to zero.
# source: https://github.com/kohya-ss/sd-scripts/commit/0bad5ae9f16e235660e43101e842a380bc62c814
import torch
from torch import Tensor

torch.manual_seed(0)


def initialize_pissa(org_module, lora_down, lora_up, scale, rank):
    weight_dtype = org_module.weight.data.dtype
    weight = org_module.weight.data.to(dtype=torch.float32)
    V, S, Uh = torch.linalg.svd(weight, full_matrices=False)
    Vr = V[:, :rank]
    Sr = S[:rank]
    Sr /= rank
    Uhr = Uh[:rank]
    down = torch.diag(torch.sqrt(Sr)) @ Uhr
    up = Vr @ torch.diag(torch.sqrt(Sr))
    lora_up.weight.data = up
    lora_down.weight.data = down
    weight = weight.data - scale * (up @ down)
    org_module.weight.data = weight.to(dtype=weight_dtype)


class LoRAModule(torch.nn.Module):
    def __init__(self, lora_name, org_module, multiplier=1.0, lora_dim=2, alpha=1, initialize=None):
        super().__init__()
        self.lora_name = lora_name
        in_dim = org_module.in_features
        out_dim = org_module.out_features
        self.lora_dim = lora_dim
        self.scale = alpha / self.lora_dim
        self.lora_down = torch.nn.Linear(in_dim, self.lora_dim, bias=False)
        self.lora_up = torch.nn.Linear(self.lora_dim, out_dim, bias=False)
        if initialize == "pissa":
            initialize_pissa(org_module, self.lora_down, self.lora_up, self.scale, self.lora_dim)
            # Need to store the original weights so we can get a plain LoRA out
            self._org_lora_up = self.lora_up.weight.data
            self._org_lora_down = self.lora_down.weight.data
        self.multiplier = multiplier
        self.org_module = org_module

    def apply_to(self):
        self.org_forward = self.org_module.forward
        self.org_module.forward = self.forward
        del self.org_module

    def forward(self, x):
        org_forwarded = self.org_forward(x)
        lx = self.lora_up(self.lora_down(x))
        return org_forwarded + lx * self.multiplier * self.scale


def convert_pissa_to_standard_lora(trained_up: Tensor, trained_down: Tensor, orig_up: Tensor, orig_down: Tensor, rank: int):
    # Calculate dW = A'B' - AB
    delta_w = (trained_up @ trained_down) - (orig_up @ orig_down)
    U, S, V = torch.linalg.svd(delta_w, full_matrices=False)
    rank = min(rank * 2, len(S))
    new_up = U[:, :rank] @ torch.diag(torch.sqrt(S[:rank]))
    new_down = torch.diag(torch.sqrt(S[:rank])) @ V[:rank, :]
    return new_up, new_down


def main():
    org_module = torch.nn.Linear(6, 5)
    for p in org_module.parameters():
        p.requires_grad_(False)
    lora = LoRAModule("lora_unet_single_blocks_0_linear1", org_module, initialize="pissa")
    lora.apply_to()
    optimizer = torch.optim.SGD(lora.parameters(), lr=0.5)

    x = torch.randn(8, 6)
    target = torch.randn(8, 5)
    for step in range(3):
        loss = (org_module(x) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # <-- IPL002

    with torch.no_grad():
        state_dict = lora.state_dict()
        up, down = convert_pissa_to_standard_lora(
            state_dict["lora_up.weight"], state_dict["lora_down.weight"], lora._org_lora_up, lora._org_lora_down, lora.lora_dim
        )
    return up @ down


delta_w = main()
