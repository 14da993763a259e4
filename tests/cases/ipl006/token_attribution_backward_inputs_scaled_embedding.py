# label: hazard silent
# why: the embedding output is scaled by sqrt(d) in place and then passed to backward(inputs=[emb]), so emb.grad is the gradient w.r.t. the scaled tensor, not the raw embedding.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

d_model = 8
embed = nn.Embedding(10, d_model)
encoder = nn.Sequential(nn.Linear(d_model, d_model), nn.Tanh(), nn.Linear(d_model, 1))
tokens = torch.tensor([[1, 4, 7, 2]])

emb = embed(tokens)
scaled = emb.mul_(math.sqrt(d_model))  # <-- IPL006
score = encoder(scaled).sum()

# attribution: gradient x input on the embedding only, do not touch params
score.backward(inputs=[emb])
attribution = emb.grad.sum(-1)
emb_grad = emb.grad.clone()
