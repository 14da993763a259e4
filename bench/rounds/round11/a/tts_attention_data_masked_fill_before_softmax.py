# label: safe
# why: the padding mask is written into attention.data with -inf right before softmax; softmax's backward only uses its output (exactly 0 at masked steps), so the gradients equal those of an out-of-place masked_fill.
# source: https://github.com/mozilla/TTS/pull/258
import torch
from torch import nn

torch.manual_seed(0)


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super(Linear, self).__init__()
        self.linear_layer = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        return self.linear_layer(x)


class Attention(nn.Module):
    def __init__(self, attention_rnn_dim, embedding_dim, attention_dim):
        super(Attention, self).__init__()
        self.query_layer = Linear(attention_rnn_dim, attention_dim, bias=False)
        self.inputs_layer = Linear(embedding_dim, attention_dim, bias=False)
        self.v = Linear(attention_dim, 1, bias=True)
        self._mask_value = -float("inf")

    def preprocess_inputs(self, inputs):
        return self.inputs_layer(inputs)

    def get_attention(self, query, processed_inputs):
        processed_query = self.query_layer(query.unsqueeze(1))
        energies = self.v(torch.tanh(processed_query + processed_inputs))
        energies = energies.squeeze(-1)
        return energies

    def forward(self, attention_hidden_state, inputs, processed_inputs, mask):
        attention = self.get_attention(attention_hidden_state, processed_inputs)
        # apply masking
        if mask is not None:
            attention.data.masked_fill_(~mask, self._mask_value)
        alignment = torch.softmax(attention, dim=-1)
        context = torch.bmm(alignment.unsqueeze(1), inputs)
        context = context.squeeze(1)
        return context, alignment


attn = Attention(attention_rnn_dim=6, embedding_dim=5, attention_dim=4)
inputs = torch.randn(2, 7, 5, requires_grad=True)
input_lengths = torch.tensor([7, 4])
mask = torch.arange(7)[None, :] < input_lengths[:, None]
attention_rnn = nn.GRUCell(5, 6)
query = torch.zeros(2, 6)
processed_inputs = attn.preprocess_inputs(inputs)
contexts = []
context = torch.zeros(2, 5)
for _ in range(3):
    query = attention_rnn(context, query)
    context, alignment = attn(query, inputs, processed_inputs, mask)
    contexts.append(context)
outputs = torch.stack(contexts, 1)
loss = outputs.pow(2).sum()
loss.backward()
