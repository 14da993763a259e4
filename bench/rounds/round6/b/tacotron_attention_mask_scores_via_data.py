# label: safe
# why: the padded alignment scores are set to -inf through .data on a Linear output nobody saved; softmax gives those positions zero weight and zero gradient either way, so the .data write changes neither outputs nor gradients
# source: https://github.com/r9y9/tacotron_pytorch/issues/16 (tacotron_pytorch/attention.py, AttentionWrapper.forward)
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class BahdanauAttention(nn.Module):
    def __init__(self, dim):
        super(BahdanauAttention, self).__init__()
        self.query_layer = nn.Linear(dim, dim, bias=False)
        self.tanh = nn.Tanh()
        self.v = nn.Linear(dim, 1, bias=False)

    def forward(self, query, processed_memory):
        if query.dim() == 2:
            # insert time-axis for broadcasting
            query = query.unsqueeze(1)
        # (batch, 1, dim)
        processed_query = self.query_layer(query)

        # (batch, max_time, 1)
        alignment = self.v(self.tanh(processed_query + processed_memory))

        # (batch, max_time)
        return alignment.squeeze(-1)


def get_mask_from_lengths(memory, memory_lengths):
    mask = torch.zeros(memory.size(0), memory.size(1), dtype=torch.bool)
    for idx, l in enumerate(memory_lengths):
        mask[idx][:l] = 1
    return ~mask


class AttentionWrapper(nn.Module):
    def __init__(self, rnn_cell, attention_mechanism,
                 score_mask_value=-float("inf")):
        super(AttentionWrapper, self).__init__()
        self.rnn_cell = rnn_cell
        self.attention_mechanism = attention_mechanism
        self.score_mask_value = score_mask_value

    def forward(self, query, attention, cell_state, memory,
                processed_memory=None, mask=None, memory_lengths=None):
        if processed_memory is None:
            processed_memory = memory
        if memory_lengths is not None and mask is None:
            mask = get_mask_from_lengths(memory, memory_lengths)

        # Concat input query and previous attention context
        cell_input = torch.cat((query, attention), -1)

        # Feed it to RNN
        cell_output = self.rnn_cell(cell_input, cell_state)

        # Alignment
        # (batch, max_time)
        alignment = self.attention_mechanism(cell_output, processed_memory)

        if mask is not None:
            mask = mask.view(query.size(0), -1)
            alignment.data.masked_fill_(mask, self.score_mask_value)

        # Normalize attention weight
        alignment = F.softmax(alignment, dim=-1)

        # Attention context vector
        # (batch, 1, dim)
        attention = torch.bmm(alignment.unsqueeze(1), memory)

        # (batch, dim)
        attention = attention.squeeze(1)

        return cell_output, attention, alignment


dim = 6
attention_rnn = AttentionWrapper(nn.GRUCell(4 + dim, dim), BahdanauAttention(dim))
memory_layer = nn.Linear(dim, dim, bias=False)
proj_to_mel = nn.Linear(2 * dim, 4)

encoder_outputs = torch.randn(2, 5, dim, requires_grad=True)
memory_lengths = [5, 3]
processed_memory = memory_layer(encoder_outputs)
mask = get_mask_from_lengths(processed_memory, memory_lengths)

current_input = torch.zeros(2, 4)
attention_rnn_hidden = torch.zeros(2, dim)
current_attention = torch.zeros(2, dim)
outputs, alignments = [], []
for t in range(3):
    attention_rnn_hidden, current_attention, alignment = attention_rnn(
        current_input, current_attention, attention_rnn_hidden,
        encoder_outputs, processed_memory=processed_memory, mask=mask)
    output = proj_to_mel(torch.cat((attention_rnn_hidden, current_attention), -1))
    outputs.append(output)
    alignments.append(alignment)
    current_input = output

mel_outputs = torch.stack(outputs, 1)
alignments = torch.stack(alignments, 1)
loss = mel_outputs.pow(2).mean()
loss.backward()
