# label: hazard raises
# why: clamp_ on a transposed view of the sigmoid output modifies the tensor sigmoid saved.
import torch
import torch.nn as nn

torch.manual_seed(0)

proj = nn.Linear(5, 3)
feats = torch.randn(8, 5)
target = torch.rand(3, 8)

probs = torch.sigmoid(proj(feats))   # (8, 3)
probs_t = probs.transpose(0, 1)      # (3, 8) view
probs_t.clamp_(1e-3, 1 - 1e-3)  # <-- IPL001: probs_t aliases the saved sigmoid output
loss = nn.functional.binary_cross_entropy(probs_t, target)
loss.backward()
