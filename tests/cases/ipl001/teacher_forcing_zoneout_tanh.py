# label: hazard raises
# why: the hidden state is tanh's output (saved for backward); masking it with h.mul_(keep) invalidates the saved tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, emb_dim, hid = 10, 8, 16
emb = nn.Embedding(vocab, emb_dim)
cell = nn.Linear(emb_dim + hid, hid)
out_proj = nn.Linear(hid, vocab)
params = list(emb.parameters()) + list(cell.parameters()) + list(out_proj.parameters())
opt = torch.optim.Adam(params, lr=1e-3)

tgt = torch.randint(0, vocab, (4, 6))
h = torch.zeros(4, hid)
loss = torch.zeros(())
for t in range(tgt.size(1) - 1):
    inp = emb(tgt[:, t])  # teacher forcing: feed the ground-truth token
    h = torch.tanh(cell(torch.cat([inp, h], dim=1)))
    keep = (torch.rand(4, hid) > 0.1).float()
    h.mul_(keep)  # <-- IPL001
    logits = out_proj(h)
    loss = loss + F.cross_entropy(logits, tgt[:, t + 1])
loss = loss / (tgt.size(1) - 1)

opt.zero_grad()
loss.backward()
opt.step()

cell_w = cell.weight.detach().clone()
