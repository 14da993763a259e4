# label: safe
# why: score_t is a squeezed view of a Linear output, which the Linear backward does not save, and softmax saves only its own output, so masked_fill_ on it is harmless in eager mode
# source: https://github.com/pytorch/pytorch/issues/54625
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class _Attention(nn.Module):
    def __init__(self, input_size=8, attention_hidden_size=8):
        super().__init__()
        self.W1 = nn.Linear(input_size, attention_hidden_size)
        self.W2 = nn.Linear(attention_hidden_size, 1, bias=False)
        self.softmax = nn.Softmax(dim=-1)

    def score(self, values):
        h_t = torch.tanh(self.W1(values))
        score_t = self.W2(h_t)
        return score_t.squeeze(2)

    def forward(self, values, mask):
        score_t = self.score(values)
        score_t.masked_fill_(torch.logical_not(mask), -np.inf)
        alpha_t = self.softmax(score_t)
        context_t = (alpha_t.unsqueeze(2) * values).sum(1)
        return context_t


class GradientImportanceMeasure(nn.Module):
    def __init__(self, hidden_size=8, num_of_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(20, hidden_size, _weight=torch.randn(20, hidden_size))
        self.attention = _Attention(hidden_size, hidden_size)
        self.output_layer = nn.Linear(hidden_size, num_of_classes)

    def forward(self, x, mask):
        embedding = self.embedding(x)
        h1 = self.attention(embedding, mask)
        predict = self.output_layer(h1)
        yc = predict[torch.arange(x.shape[0]), 1]
        yc_wrt_embedding, = torch.autograd.grad([torch.sum(yc)], [embedding], create_graph=True)
        return predict, torch.abs(torch.sum(yc_wrt_embedding, dim=-1))


model = GradientImportanceMeasure()
x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]])
mask = x != 0
results = []
for iteration in range(2):
    predict, importance = model(x, mask)
    results.append(importance.detach())
    loss = predict.sum() + importance.sum()
    loss.backward()
importance_all = torch.stack(results)
