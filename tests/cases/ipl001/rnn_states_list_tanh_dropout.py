# label: hazard raises
# why: each stored state is a tanh output (saved by tanh and by the next step's Linear); masking the states in place through the list raises in backward
import torch
import torch.nn as nn

torch.manual_seed(0)


class ElmanEncoder(nn.Module):
    def __init__(self, inp=6, hid=10, p=0.3):
        super().__init__()
        self.ih = nn.Linear(inp, hid)
        self.hh = nn.Linear(hid, hid, bias=False)
        self.p = p

    def forward(self, xs):
        h = xs.new_zeros(xs.size(1), self.hh.in_features)
        states = []
        for x_t in xs:
            h = torch.tanh(self.ih(x_t) + self.hh(h))
            states.append(h)
        # variational dropout: one mask shared across time steps for the memory bank
        keep = torch.bernoulli(torch.full_like(h, 1 - self.p)) / (1 - self.p)
        for s in states:
            s.mul_(keep)  # <-- IPL001
        return torch.stack(states), h


enc = ElmanEncoder()
xs = torch.randn(4, 3, 6)
memory, last = enc(xs)
query = nn.Parameter(torch.randn(3, 10))
attn = torch.einsum("tbh,bh->tb", memory, query).softmax(0)
context = (attn.unsqueeze(-1) * memory).sum(0)
loss = context.pow(2).mean() + last.mean()
loss.backward()
grad_hh = enc.hh.weight.grad.clone()
grad_query = query.grad.clone()
