# label: safe
# why: the batch-standardisation helper clones its argument before centring and scaling it in place, so the caller's raw batch is still the reconstruction target.
import torch
import torch.nn as nn

torch.manual_seed(0)
autoenc = nn.Sequential(nn.Linear(5, 3), nn.Tanh(), nn.Linear(3, 5))
batch = torch.randn(16, 5) * 2 + 1


def standardize(x):
    x = x.clone()
    x -= x.mean(0, keepdim=True)
    x /= x.std(0, keepdim=True) + 1e-6
    return x


recon = autoenc(standardize(batch))
loss = (recon - batch).pow(2).mean()
loss.backward()
