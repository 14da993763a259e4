# label: hazard silent
# why: with an integer-valued codebook some triplets satisfy d(a,p) - d(a,n) + margin == 0 exactly, and clamp_min(0) back-propagates through them where relu does not, so the codebook gradient differs.
import torch
import torch.nn as nn

torch.manual_seed(0)

codebook = nn.Parameter(torch.tensor([
    [0.0, 0.0],
    [1.0, 0.0],
    [2.0, 0.0],
    [0.0, 1.0],
    [1.0, 2.0],
    [3.0, 1.0],
]))
anchors = torch.tensor([0, 0, 3, 1, 4])
positives = torch.tensor([1, 3, 4, 2, 3])
negatives = torch.tensor([2, 5, 0, 0, 1])
margin = 3.0

a, p, n = codebook[anchors], codebook[positives], codebook[negatives]
d_ap = (a - p).pow(2).sum(-1)
d_an = (a - n).pow(2).sum(-1)
per_triplet = (d_ap - d_an + margin).clamp_min(0)  # <-- IPL008: several triplets land exactly on 0
loss = per_triplet.mean()
loss.backward()
codebook_grad = codebook.grad.clone()
