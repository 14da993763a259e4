# label: hazard raises
# why: masked_fill_ on the softmax output overwrites the tensor softmax saved for its backward
import torch
import torch.nn as nn

torch.manual_seed(0)
d = 8
q_proj = nn.Linear(d, d)
k_proj = nn.Linear(d, d)
v_proj = nn.Linear(d, d)

tokens = torch.randn(2, 5, d, requires_grad=True)
pad = torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 1]], dtype=torch.bool)

q, k, v = q_proj(tokens), k_proj(tokens), v_proj(tokens)
scores = q @ k.transpose(1, 2) / d ** 0.5
attn = torch.softmax(scores, dim=-1)
# zero out attention to padding positions after the softmax
attn.masked_fill_(pad[:, None, :], 0.0)  # <-- IPL001
ctx_vec = attn @ v
loss = ctx_vec.pow(2).mean()
loss.backward()

tokens_grad = tokens.grad
