# label: hazard silent
# why: smoothing is applied in place through an alias of batch["target"], so the hard-label loss later reads smoothed targets
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_classes = 4
eps = 0.1
model = nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, num_classes))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

batch = {
    "x": torch.randn(8, 5),
    "target": F.one_hot(torch.randint(0, num_classes, (8,)), num_classes).float(),
}

soft = batch["target"]
soft.mul_(1 - eps).add_(eps / num_classes)  # <-- IPL002

logits = model(batch["x"])
logp = F.log_softmax(logits, dim=1)
smooth_loss = -(soft * logp).sum(dim=1).mean()
# auxiliary hard-label NLL, meant to use the original one-hot targets
hard_loss = -(batch["target"] * logp).sum(dim=1).mean()
loss = 0.8 * smooth_loss + 0.2 * hard_loss

opt.zero_grad()
loss.backward()
opt.step()

w_after = model[0].weight.detach().clone()
b_grad = model[0].bias.grad.clone()
