# label: safe
# why: the helper clones its argument before sub_/div_, so the caller's raw features used as the reconstruction target stay untouched
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def standardize(x, eps=1e-6):
    x = x.clone()
    mean = x.mean(dim=0, keepdim=True)
    std = x.std(dim=0, keepdim=True)
    x.sub_(mean).div_(std + eps)
    return x


encoder = nn.Sequential(nn.Linear(6, 3), nn.Tanh())
decoder = nn.Linear(3, 6)

features = torch.randn(16, 6) * 3.0 + 1.0
inputs = standardize(features)
codes = encoder(inputs)
recon = decoder(codes)
loss = F.mse_loss(recon, features)
loss.backward()
encoder_grad = encoder[0].weight.grad
decoder_grad = decoder.weight.grad
