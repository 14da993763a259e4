# label: hazard raises
# why: parse_output zeroes the padded frames of mel_outputs with masked_fill_, but mel_outputs was already fed to the postnet, whose first Conv1d saved it for backward.
# source: https://github.com/speechbrain/speechbrain/commit/f79b77f1431ecf617c70bc2fac2531d01f7d6820
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def get_mask_from_lengths(lengths, max_len=None):
    if max_len is None:
        max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len, device=lengths.device, dtype=lengths.dtype)
    mask = (ids < lengths.unsqueeze(1)).byte()
    mask = torch.le(mask, 0)
    return mask


class Postnet(nn.Module):
    def __init__(self, n_mel_channels=4, postnet_embedding_dim=8, kernel_size=3):
        super().__init__()
        self.convolutions = nn.ModuleList([
            nn.Sequential(nn.Conv1d(n_mel_channels, postnet_embedding_dim, kernel_size, padding=1), nn.BatchNorm1d(postnet_embedding_dim)),
            nn.Sequential(nn.Conv1d(postnet_embedding_dim, n_mel_channels, kernel_size, padding=1), nn.BatchNorm1d(n_mel_channels)),
        ])

    def forward(self, x):
        for i in range(len(self.convolutions) - 1):
            x = F.dropout(torch.tanh(self.convolutions[i](x)), 0.5, self.training)
        x = F.dropout(self.convolutions[-1](x), 0.5, self.training)
        return x


class Decoder(nn.Module):
    def __init__(self, n_mel_channels=4, enc_dim=6):
        super().__init__()
        self.n_mel_channels = n_mel_channels
        self.rnn = nn.GRUCell(n_mel_channels + enc_dim, 8)
        self.linear_projection = nn.Linear(8, n_mel_channels)
        self.gate_layer = nn.Linear(8, 1)

    def forward(self, memory, decoder_inputs, memory_lengths):
        context = memory.mean(dim=1)
        frame = memory.new_zeros(memory.size(0), self.n_mel_channels)
        hidden = memory.new_zeros(memory.size(0), 8)
        mel_outputs, gate_outputs, alignments = [], [], []
        for t in range(decoder_inputs.size(2)):
            hidden = self.rnn(torch.cat([frame, context], dim=1), hidden)
            mel_outputs.append(self.linear_projection(hidden))
            gate_outputs.append(self.gate_layer(hidden).squeeze(1))
            alignments.append(torch.softmax(memory.sum(-1), dim=1))
            frame = decoder_inputs[:, :, t]
        mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous().transpose(1, 2)
        gate_outputs = torch.stack(gate_outputs).transpose(0, 1).contiguous()
        alignments = torch.stack(alignments).transpose(0, 1)
        return mel_outputs, gate_outputs, alignments


class Tacotron2(nn.Module):
    def __init__(self, n_symbols=10, n_mel_channels=4, mask_padding=True):
        super().__init__()
        self.mask_padding = mask_padding
        self.n_mel_channels = n_mel_channels
        self.embedding = nn.Embedding(n_symbols, 6)
        self.encoder = nn.Conv1d(6, 6, 3, padding=1)
        self.decoder = Decoder(n_mel_channels)
        self.postnet = Postnet(n_mel_channels)

    def parse_output(self, outputs, output_lengths, alignments_dim=None):
        mel_outputs, mel_outputs_postnet, gate_outputs, alignments = outputs
        if self.mask_padding and output_lengths is not None:
            mask = get_mask_from_lengths(output_lengths, max_len=mel_outputs.size(-1))
            mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
            mask = mask.permute(1, 0, 2)

            mel_outputs.masked_fill_(mask, 0.0)  # <-- IPL001: mel_outputs was saved by the postnet's first conv
            mel_outputs_postnet.masked_fill_(mask, 0.0)
            gate_outputs.masked_fill_(mask[:, 0, :], 1e3)  # gate energies
        if alignments_dim is not None:
            alignments = F.pad(alignments, (0, alignments_dim - alignments.size(-1)))
        return mel_outputs, mel_outputs_postnet, gate_outputs, alignments

    def forward(self, inputs, alignments_dim=None):
        inputs, input_lengths, targets, max_len, output_lengths = inputs
        input_lengths, output_lengths = input_lengths.data, output_lengths.data

        embedded_inputs = self.embedding(inputs).transpose(1, 2)
        encoder_outputs = torch.relu(self.encoder(embedded_inputs)).transpose(1, 2)

        mel_outputs, gate_outputs, alignments = self.decoder(encoder_outputs, targets, memory_lengths=input_lengths)

        mel_outputs_postnet = self.postnet(mel_outputs)
        mel_outputs_postnet = mel_outputs + mel_outputs_postnet

        return self.parse_output([mel_outputs, mel_outputs_postnet, gate_outputs, alignments], output_lengths, alignments_dim)


model = Tacotron2()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
text = torch.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 0, 0]])
input_lengths = torch.tensor([5, 3])
mel_target = torch.randn(2, 4, 6)
output_lengths = torch.tensor([6, 4])
gate_target = torch.zeros(2, 6)
gate_target[0, 5] = 1.0
gate_target[1, 3:] = 1.0

mel_out, mel_out_postnet, gate_out, alignments = model((text, input_lengths, mel_target, 6, output_lengths))
mel_loss = F.mse_loss(mel_out, mel_target) + F.mse_loss(mel_out_postnet, mel_target)
gate_loss = F.binary_cross_entropy_with_logits(gate_out, gate_target)
loss = mel_loss + gate_loss
loss.backward()
optimizer.step()
