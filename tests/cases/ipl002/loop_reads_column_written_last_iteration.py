# label: hazard silent
# why: each step reads the previous column through the `history` alias, but the previous step already overwrote that column of the buffer
import torch

torch.manual_seed(0)


def decode(x, steps):
    buf = x.clone()
    history = buf
    outs = []
    for c in range(1, steps):
        outs.append(history[:, c - 1] * 0.5)
        buf[:, c] = buf[:, c] + outs[-1]  # <-- IPL002
    return torch.stack(outs, dim=1), buf


x = torch.randn(3, 5)
outs, buf = decode(x, 5)
