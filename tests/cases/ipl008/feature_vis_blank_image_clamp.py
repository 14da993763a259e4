# label: hazard silent
# why: feature visualisation starts from an all-zero image and keeps it non-negative with img.clamp(min=0); at exactly 0 clamp passes gradient 1 where relu passes 0, so the optimised image differs.
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Tanh(), nn.Flatten(), nn.Linear(4 * 5 * 5, 3))
for p in net.parameters():
    p.requires_grad_(False)
unit = 1

img = torch.zeros(1, 1, 5, 5, requires_grad=True)
opt = torch.optim.SGD([img], lr=0.5)
for step in range(3):
    x = img.clamp(min=0)  # <-- IPL008: blank start sits exactly on the kink
    act = net(x)[0, unit]
    opt.zero_grad()
    (-act).backward()
    opt.step()

first_grad = img.grad.clone()
final_img = img.detach().clone()
