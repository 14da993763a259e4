# label: hazard silent
# why: torch.add(buf, g, out=buf) writes into the tensor that prev_buf also names, so the logged update size is always zero
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(3, 1)
x = torch.randn(8, 3)
y = torch.randn(8, 1)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()

grad = model.weight.grad.detach()
buf = torch.zeros_like(grad)
update_norms = []
for _ in range(3):
    prev_buf = buf
    torch.add(0.9 * buf, grad, out=buf)  # <-- IPL002
    update_norms.append((buf - prev_buf).norm())
update_norms = torch.stack(update_norms)
