# label: safe
# why: apply_mask clones the running mask before zeroing already-visited indices, so the mask that an earlier step's product saved for backward is never overwritten.
# source: https://github.com/pemami4911/neural-combinatorial-rl-pytorch/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def Var(*shape):
    return nn.Parameter(torch.randn(*shape) * 0.1)


class Decoder(nn.Module):
    def __init__(self, feactures_dim, hidden_size, n_layers=1):
        super(Decoder, self).__init__()
        self.W1 = Var(hidden_size, hidden_size)
        self.W2 = Var(hidden_size, hidden_size)
        self.b2 = Var(hidden_size)
        self.V = Var(hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, batch_first=True, num_layers=n_layers)

    def forward(self, input, hidden, enc_outputs, mask, prev_idxs):
        w1e = torch.matmul(enc_outputs, self.W1)
        w2h = (torch.matmul(hidden[0][-1], self.W2) + self.b2).unsqueeze(1)
        u = torch.tanh(w1e + w2h)
        a = torch.matmul(u, self.V)
        a, mask = self.apply_mask(a, mask, prev_idxs)
        a = F.softmax(a, dim=1)
        res, hidden = self.lstm(input, hidden)
        return a, hidden, mask

    def apply_mask(self, attentions, mask, prev_idxs):
        if mask is None:
            mask = torch.ones(attentions.size())
        maskk = mask.clone()
        if prev_idxs is not None:
            for i, j in zip(range(attentions.size(0)), prev_idxs):
                maskk[i, j[0]] = 0
        masked = maskk * attentions + maskk.log()
        return masked, maskk


B, L, H = 2, 5, 8
decoder = Decoder(2, H)
enc_outputs = torch.randn(B, L, H)
hidden = (torch.zeros(1, B, H), torch.zeros(1, B, H))
dec_input = torch.zeros(B, 1, H)
mask = None
prev_idxs = None
log_probs = []
for step in range(3):
    probs, hidden, mask = decoder(dec_input, hidden, enc_outputs, mask, prev_idxs)
    idxs = probs.argmax(dim=1, keepdim=True)
    log_probs.append(torch.log(probs.gather(1, idxs) + 1e-8))
    dec_input = torch.stack([enc_outputs[i, idxs[i, 0]] for i in range(B)]).unsqueeze(1)
    prev_idxs = idxs

loss = -torch.cat(log_probs, dim=1).sum()
loss.backward()
