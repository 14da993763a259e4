# label: hazard raises
# why: the shared dropout layer is in-place and is applied to the LSTM decoder output, which the RNN backward saved, so training the transducer fails in backward
# source: https://github.com/CUNY-CL/yoyodyne/pull/298 (commit 3c82732b243a03cf4db734181689c27ebd84cc48)
import dataclasses

import torch
from torch import nn

torch.manual_seed(0)


@dataclasses.dataclass
class ModuleOutput:
    output: torch.Tensor
    hiddens: tuple = None


class BaseModule(nn.Module):
    def __init__(self, pad_idx, embeddings, embedding_size, dropout=0.2, hidden_size=8, layers=1):
        super().__init__()
        self.pad_idx = pad_idx
        self.embeddings = embeddings
        self.embedding_size = embedding_size
        self.dropout = dropout
        self.hidden_size = hidden_size
        self.layers = layers
        self.dropout_layer = nn.Dropout(p=self.dropout, inplace=True)  # <-- IPL001: applied in place to the LSTM output saved for backward

    def embed(self, symbols):
        embedded = self.embeddings(symbols)
        self.dropout_layer(embedded)
        return embedded


class LSTMEncoder(BaseModule):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.module = nn.LSTM(self.embedding_size, self.hidden_size, num_layers=self.layers, batch_first=True)

    def forward(self, source):
        embedded = self.embed(source)
        output, hiddens = self.module(embedded)
        return ModuleOutput(output, hiddens)


class LSTMDecoder(BaseModule):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.module = nn.LSTM(self.embedding_size, self.hidden_size, num_layers=self.layers, batch_first=True)

    def forward(self, symbol, last_hiddens, encoder_out=None, encoder_mask=None):
        embedded = self.embed(symbol)
        output, hiddens = self.module(embedded, last_hiddens)
        self.dropout_layer(output)
        return ModuleOutput(output, hiddens)


vocab_size, embedding_size, hidden_size = 12, 6, 8
embeddings = nn.Embedding(vocab_size, embedding_size, padding_idx=0)
encoder = LSTMEncoder(0, embeddings, embedding_size, hidden_size=hidden_size)
decoder = LSTMDecoder(0, embeddings, embedding_size, hidden_size=hidden_size)
classifier = nn.Linear(hidden_size, vocab_size)
loss_func = nn.CrossEntropyLoss(ignore_index=0)

source = torch.tensor([[3, 4, 5, 6], [7, 8, 9, 0]])
target = torch.tensor([[4, 5, 6], [8, 9, 10]])
encoded = encoder(source)
hiddens = encoded.hiddens
symbol = torch.full((2, 1), 1)
logits = []
for t in range(target.size(1)):
    decoded = decoder(symbol, hiddens)
    hiddens = decoded.hiddens
    logits.append(classifier(decoded.output))
    symbol = target[:, t:t + 1]  # teacher forcing
logits = torch.cat(logits, dim=1)
loss = loss_func(logits.transpose(1, 2), target)
loss.backward()
