# label: safe
# why: old is a clone taken before torch.lerp(..., out=protos), so the convergence shift compares the new prototypes with the real previous ones.
import torch

torch.manual_seed(0)

data = torch.cat([torch.randn(30, 2) + 3.0, torch.randn(30, 2) - 3.0])
protos = data[torch.tensor([0, 45])].clone()

for it in range(20):
    assign = torch.cdist(data, protos).argmin(1)
    means = torch.stack([data[assign == k].mean(0) for k in range(2)])
    old = protos.clone()
    torch.lerp(protos, means, 0.5, out=protos)
    shift = (protos - old).norm()
    if shift < 1e-4:
        break

iterations = torch.tensor(float(it))
final_protos = protos
