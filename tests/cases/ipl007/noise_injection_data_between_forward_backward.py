# label: hazard silent
# why: noise added to the activation through .data after the forward is seen by exp's saved output (and dec's saved input), corrupting the gradients backward computes
import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Linear(6, 6)
dec = nn.Linear(6, 2)
x = torch.randn(8, 6)
target = torch.randn(8, 2)

rate = torch.exp(0.5 * enc(x))          # exp saves its output
pred = dec(rate)
loss = ((pred - target) ** 2).mean()

# perturb the activations for the "noisy" logging branch
noise = 0.3 * torch.randn_like(rate)
rate.data.add_(noise)  # <-- IPL007
noisy_mag = rate.detach().abs().mean()

loss.backward()
enc_grad = enc.weight.grad.clone()
dec_grad = dec.weight.grad.clone()
