# label: hazard raises
# why: F.threshold(..., inplace=True) sparsifies the attention probabilities in place, but SoftmaxBackward saved exactly that tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

score = nn.Linear(4, 1)
tokens = torch.randn(2, 6, 4)

logits = score(tokens).squeeze(-1)
attn = F.softmax(logits, dim=-1)
attn = F.threshold(attn, 0.1, 0.0, inplace=True)  # <-- IPL001
pooled = (attn.unsqueeze(-1) * tokens).sum(1)
loss = pooled.pow(2).sum()
loss.backward()
