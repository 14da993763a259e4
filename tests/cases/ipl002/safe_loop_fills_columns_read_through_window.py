# label: safe
# why: iteration c writes column c of the buffer and reads column c of a window starting one column later, which no earlier iteration wrote
import torch

torch.manual_seed(0)


def decode(steps, proj):
    codes = torch.zeros(2, steps + 1)
    window = codes[:, 1:]
    logits = []
    for c in range(steps):
        logits.append(window[:, c].unsqueeze(1) * 2.0 + 1.0)
        codes[:, c] = torch.arange(2, dtype=torch.float32) + c
    scores = torch.cat(logits, dim=1)
    return (codes @ proj).sum() + scores.sum()


proj = torch.randn(5, 3, requires_grad=True)
loss = decode(4, proj)
loss.backward()
