# label: hazard raises
# why: torch.add(..., out=feats) overwrites feats after the matmul saved it to compute W's gradient, so backward raises.
import torch

torch.manual_seed(0)

W = torch.randn(3, 2, requires_grad=True)
b = torch.zeros(2, requires_grad=True)
feats = torch.randn(4, 3)
shift = torch.full((3,), 0.5)

logits = feats @ W + b
# shift the features for the second head, reusing the buffer
torch.add(feats, shift, out=feats)  # <-- IPL001
logits2 = feats @ W
loss = logits.logsumexp(-1).sum() + logits2.pow(2).mean()
loss.backward()
