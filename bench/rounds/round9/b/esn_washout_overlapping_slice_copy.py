# label: hazard raises
# why: washout_tensor shifts each sequence left by copying tensor[washout:len, b] into tensor[:len - washout, b] in place; with batch_first the tensor is a transposed view of the reservoir output and source and destination overlap in memory, which torch rejects.
# source: https://github.com/stefanonardo/pytorch-esn/pull/9
import torch
import torch.nn as nn

torch.manual_seed(0)


def washout_tensor(tensor, washout, seq_lengths, bidirectional=False, batch_first=False):
    tensor = tensor.transpose(0, 1) if batch_first else tensor.clone()
    if type(seq_lengths) == list:
        seq_lengths = seq_lengths.copy()
    for b in range(tensor.size(1)):
        if washout[b] > 0:
            tmp = tensor[washout[b]:seq_lengths[b], b]
            tensor[:seq_lengths[b] - washout[b], b] = tmp  # <-- IPL002: tmp is an overlapping view of the tensor being written
            tensor[seq_lengths[b] - washout[b]:, b] = 0
            seq_lengths[b] -= washout[b]
    max_len = max(seq_lengths)
    return tensor[:max_len], seq_lengths


class ESN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, batch_first=True):
        super().__init__()
        self.batch_first = batch_first
        self.w_in = torch.randn(hidden_size, input_size) * 0.5
        self.w_hh = torch.randn(hidden_size, hidden_size) * (0.9 / hidden_size ** 0.5)
        self.readout = nn.Linear(hidden_size, output_size)

    def reservoir(self, input):
        B, T, _ = input.shape
        h = torch.zeros(B, self.w_hh.shape[0])
        outputs = []
        for t in range(T):
            h = torch.tanh(input[:, t] @ self.w_in.t() + h @ self.w_hh.t())
            outputs.append(h)
        return torch.stack(outputs, dim=1)

    def forward(self, input, washout, seq_lengths):
        output = self.reservoir(input)
        output, seq_lengths = washout_tensor(output, washout, seq_lengths, batch_first=self.batch_first)
        return self.readout(output), seq_lengths


model = ESN(input_size=2, hidden_size=6, output_size=1)
trX = torch.randn(2, 7, 2)
trY = torch.randn(5, 2, 1)
washout = [2, 3]
out, lengths = model(trX, washout, [7, 7])
loss = ((out - trY[: out.shape[0]]) ** 2).mean()
loss.backward()
