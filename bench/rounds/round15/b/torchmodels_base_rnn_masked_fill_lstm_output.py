# label: hazard raises
# why: BaseRNN.forward zeroes padded time steps of the LSTM output with `o.masked_fill_`, but the LSTM saved that output for its backward pass.
# source: https://github.com/kaniblu/pytorch-models/pull/8 (fix commit 23ee6919eb58fdd2b7b5351a70f04a45692196f2, "removed inplace operation")
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.nn.utils.rnn as tr

torch.manual_seed(0)


def mask(lens, max_len):
    idx = torch.arange(max_len).unsqueeze(0)
    return idx < lens.unsqueeze(1)


def init_rnn(cell, gain=1):
    # orthogonal initialization of recurrent weights
    for _, hh, _, _ in cell.all_weights:
        for i in range(0, hh.size(0), cell.hidden_size):
            init.orthogonal_(hh[i:i + cell.hidden_size], gain=gain)


class AbstractRNN(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super(AbstractRNN, self).__init__()
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim

    def forward(self, x, lens=None, h=None):
        raise NotImplementedError()


class BaseRNN(AbstractRNN):
    def __init__(self, *args, dynamic=False, layers=1, dropout=0, **kwargs):
        super(BaseRNN, self).__init__(*args, **kwargs)
        self.dynamic = dynamic
        self.layers = layers
        self.dropout = dropout

    def forward_cell(self, x, h0):
        raise NotImplementedError()

    def forward(self, x, lens=None, h=None):
        batch_size, max_len, _ = x.size()
        m = None
        if lens is not None:
            m = mask(lens, max_len)
            x = x.masked_fill(~m.unsqueeze(-1), 0)
        if self.dynamic:
            x = tr.pack_padded_sequence(x, lens, True)
        o, c, h = self.forward_cell(x, h)
        if self.dynamic:
            o, _ = tr.pad_packed_sequence(o, True, 0, max_len)
            o = o.contiguous()
        if lens is not None:
            o.masked_fill_(~m.unsqueeze(-1), 0)  # <-- IPL001: the LSTM output o is saved by the LSTM backward
        return o, c, h


class LSTM(BaseRNN):
    name = "lstm"

    def __init__(self, *args, **kwargs):
        super(LSTM, self).__init__(*args, **kwargs)
        self.lstm = nn.LSTM(**self._lstm_kwargs())
        self.reset_parameters()

    def _lstm_kwargs(self):
        return dict(input_size=self.input_dim, hidden_size=self.hidden_dim,
                    num_layers=self.layers, bidirectional=False,
                    dropout=self.dropout, batch_first=True)

    def forward_cell(self, x, h0):
        o, (h, c) = self.lstm(x, h0)
        h = h.permute(1, 0, 2).contiguous()
        c = c.permute(1, 0, 2).contiguous()
        return o, c[:, -1], h[:, -1]

    def reset_parameters(self, gain=1):
        self.lstm.reset_parameters()
        with torch.no_grad():
            init_rnn(self.lstm, gain)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 6)
        self.rnn = LSTM(6, 5)
        self.out = nn.Linear(5, 2)

    def forward(self, tokens, lens):
        o, c, h = self.rnn(self.emb(tokens), lens)
        pooled = o.sum(1) / lens.unsqueeze(-1).float()
        return self.out(pooled + h)


model = Classifier()
tokens = torch.randint(0, 12, (3, 7))
lens = torch.tensor([7, 5, 3])
labels = torch.tensor([0, 1, 1])
logits = model(tokens, lens)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
