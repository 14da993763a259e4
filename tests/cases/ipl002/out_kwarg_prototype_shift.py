# label: hazard silent
# why: old is another name for protos, so torch.lerp(..., out=protos) makes the convergence shift read zero and the loop stops after one update.
import torch

torch.manual_seed(0)

data = torch.cat([torch.randn(30, 2) + 3.0, torch.randn(30, 2) - 3.0])
protos = data[torch.tensor([0, 45])].clone()

for it in range(20):
    assign = torch.cdist(data, protos).argmin(1)
    means = torch.stack([data[assign == k].mean(0) for k in range(2)])
    old = protos
    torch.lerp(protos, means, 0.5, out=protos)  # <-- IPL002: old aliases protos
    shift = (protos - old).norm()
    if shift < 1e-4:
        break

iterations = torch.tensor(float(it))
final_protos = protos
