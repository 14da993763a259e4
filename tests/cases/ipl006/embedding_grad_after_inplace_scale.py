# label: hazard silent
# why: the embeddings are scaled by sqrt(d) in place before the adversarial-embedding gradient is taken w.r.t. them, so autograd.grad returns the gradient w.r.t. the scaled tensor instead of the raw embeddings.
import math
import torch
import torch.nn as nn

torch.manual_seed(0)
d = 8
emb = nn.Embedding(20, d)
head = nn.Sequential(nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, 3))
ids = torch.randint(0, 20, (4, 5))
labels = torch.randint(0, 3, (4,))

embeds = emb(ids)
scaled = embeds.mul_(math.sqrt(d))  # <-- IPL006: embeds is the differentiation target below
logits = head(scaled.mean(1))
loss = nn.functional.cross_entropy(logits, labels)
emb_grad, = torch.autograd.grad(loss, embeds)
perturbation = 0.01 * emb_grad / (emb_grad.norm() + 1e-12)
