# label: hazard raises
# why: hx comes from unbind(0) of a hidden state that requires grad (encoder output); squeezing one of those multi-output views in place is forbidden by autograd
# source: https://github.com/alibaba/TinyNeuralNetwork/issues/238
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class GRULayer(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.GRUCell(input_size, hidden_size)

    def forward(self, x, hx):
        outputs = []
        for t in range(x.size(0)):
            hx = self.cell(x[t], hx)
            outputs.append(hx)
        return torch.stack(outputs), hx


class GRU(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=2, batch_first=True):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.batch_first = batch_first
        self.bidirectional = False
        self.layers = nn.ModuleList(
            [GRULayer(input_size if i == 0 else hidden_size, hidden_size) for i in range(num_layers)])

    def forward(self, x: Tensor, hidden: Optional[Tensor] = None):
        if self.batch_first:
            x = x.transpose(0, 1)
        max_batch_size = x.size(1)
        num_directions = 2 if self.bidirectional else 1
        if hidden is None:
            zeros = torch.zeros(num_directions, max_batch_size, self.hidden_size, dtype=torch.float, device=x.device)
            zeros.squeeze_(0)
            hx = [zeros for _ in range(self.num_layers)]
        else:
            hx = hidden.reshape(self.num_layers, num_directions, max_batch_size, self.hidden_size).unbind(0)
            hx = [(hx[idx].squeeze_(0)) for idx in range(self.num_layers)]  # <-- IPL001: in-place on a view returned by unbind of a grad-requiring hidden

        hx_list = []
        for idx, layer in enumerate(self.layers):
            x, h = layer(x, hx[idx])
            hx_list.append(h)
        hx_tensor = torch.stack(hx_list)
        hx_tensor = hx_tensor.reshape(-1, hx_tensor.shape[-2], hx_tensor.shape[-1])
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, hx_tensor


class CRNNKWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(5, 2 * 6)
        self.kws_predictor_rnn = GRU(5, 6, num_layers=2)
        self.fc = nn.Linear(6, 3)

    def forward(self, feats):
        h0 = torch.tanh(self.encoder(feats.mean(1))).view(feats.size(0), 2, 6).transpose(0, 1)
        out, hn = self.kws_predictor_rnn(feats, h0)
        return self.fc(out[:, -1])


model = CRNNKWS()
logits = model(torch.randn(3, 4, 5))
loss = logits.logsumexp(-1).mean()
loss.backward()
