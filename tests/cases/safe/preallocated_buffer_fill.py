# label: safe
# why: outputs are written into buffers freshly made by torch.zeros / torch.empty; the index assignments are differentiable copies into tensors nobody saved
import torch
import torch.nn as nn

torch.manual_seed(0)


class UnrolledRNN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.cell = nn.RNNCell(dim, dim)
        self.mix = nn.Linear(2 * dim, dim)

    def forward(self, xs):
        T, B, D = xs.shape
        outputs = torch.zeros(T, B, D)
        h = torch.zeros(B, D)
        for t in range(T):
            h = self.cell(xs[t], h)
            outputs[t] = h
        both = torch.empty(B, 2 * D)
        both[:, :D] = outputs[0]
        both[:, D:] = outputs[-1]
        return self.mix(both), outputs


rnn = UnrolledRNN(3)
xs = torch.randn(4, 2, 3)
summary, seq = rnn(xs)
loss = summary.sum() + seq.pow(2).mean()
loss.backward()
