# label: hazard raises
# why: transpose(1, 2) returns a view; clamp_ on it writes into the softmax output that SoftmaxBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)

scorer = nn.Linear(8, 4)
seq = torch.randn(2, 5, 8)

attn = scorer(seq).softmax(dim=1)  # (B, T, heads)
attn_t = attn.transpose(1, 2)  # (B, heads, T)
attn_t.clamp_(max=0.9)  # <-- IPL001
pooled = attn_t @ seq
loss = pooled.sum()
loss.backward()
