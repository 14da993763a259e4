# label: safe no-twin
# why: the pruning and bias-folding surgery writes into nn.Parameters inside a function decorated with @torch.inference_mode(), where grad mode is off and the leaf check does not fire.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))


@torch.inference_mode()
def prune_and_scale(net, frac=0.5, scale=1.5):
    for m in net.modules():
        if isinstance(m, nn.Linear):
            w = m.weight
            thresh = w.abs().flatten().kthvalue(int(frac * w.numel())).values
            w[w.abs() < thresh] = 0.0
            m.bias.mul_(scale)


prune_and_scale(model)

x = torch.randn(4, 6)
with torch.inference_mode():
    out = model(x).clone()
sparsity = torch.tensor(float((model[0].weight == 0).float().mean()))
