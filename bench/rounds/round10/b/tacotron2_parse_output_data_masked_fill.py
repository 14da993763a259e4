# label: hazard silent no-twin
# why: parse_output zeroes the padded frames of mel_outputs through .data after the postnet conv saved mel_outputs, so the postnet weight gradient is computed from masked inputs the forward never saw.
# source: https://github.com/NVIDIA/tacotron2/issues/133
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_mask_from_lengths(lengths):
    max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len)
    return ids < lengths.unsqueeze(1)


class Postnet(nn.Module):
    def __init__(self, n_mel_channels, embedding_dim=6, kernel_size=3, n_convolutions=2):
        super().__init__()
        self.convolutions = nn.ModuleList()
        dims = [n_mel_channels] + [embedding_dim] * (n_convolutions - 1) + [n_mel_channels]
        for i in range(n_convolutions):
            self.convolutions.append(nn.Sequential(
                nn.Conv1d(dims[i], dims[i + 1], kernel_size, padding=kernel_size // 2),
                nn.BatchNorm1d(dims[i + 1])))

    def forward(self, x):
        for i in range(len(self.convolutions) - 1):
            x = F.dropout(torch.tanh(self.convolutions[i](x)), 0.5, self.training)
        return F.dropout(self.convolutions[-1](x), 0.5, self.training)


class Tacotron2(nn.Module):
    def __init__(self, n_mel_channels=4, hidden=5):
        super().__init__()
        self.n_mel_channels = n_mel_channels
        self.mask_padding = True
        self.decoder_rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.mel_proj = nn.Linear(hidden, n_mel_channels)
        self.gate_proj = nn.Linear(hidden, 1)
        self.postnet = Postnet(n_mel_channels)

    def parse_output(self, outputs, output_lengths=None):
        if self.mask_padding and output_lengths is not None:
            mask = ~get_mask_from_lengths(output_lengths)
            mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
            mask = mask.permute(1, 0, 2)

            outputs[0].data.masked_fill_(mask, 0.0)  # <-- IPL007: mel_outputs was saved by the postnet conv
            outputs[1].data.masked_fill_(mask, 0.0)  # <-- IPL007: masks through .data behind autograd's back
            outputs[2].data.masked_fill_(mask[:, 0, :], 1e3)  # <-- IPL007: gate energies changed outside autograd
        return outputs

    def forward(self, encoder_outputs, output_lengths):
        decoder_out, _ = self.decoder_rnn(encoder_outputs)
        mel_outputs = self.mel_proj(decoder_out).transpose(1, 2)
        gate_outputs = self.gate_proj(decoder_out).squeeze(-1)
        mel_outputs_postnet = self.postnet(mel_outputs)
        mel_outputs_postnet = mel_outputs + mel_outputs_postnet
        return self.parse_output([mel_outputs, mel_outputs_postnet, gate_outputs], output_lengths)


class Tacotron2Loss(nn.Module):
    def forward(self, model_output, targets):
        mel_target, gate_target = targets[0], targets[1]
        gate_target = gate_target.view(-1, 1)
        mel_out, mel_out_postnet, gate_out = model_output
        gate_out = gate_out.view(-1, 1)
        mel_loss = nn.MSELoss()(mel_out, mel_target) + nn.MSELoss()(mel_out_postnet, mel_target)
        gate_loss = nn.BCEWithLogitsLoss()(gate_out, gate_target)
        return mel_loss + gate_loss


model = Tacotron2()
model.eval()
criterion = Tacotron2Loss()
encoder_outputs = torch.randn(2, 6, 5)
output_lengths = torch.tensor([6, 4])
mel_target = torch.randn(2, 4, 6)
gate_target = torch.zeros(2, 6)
gate_target[0, 5] = 1.0
gate_target[1, 3:] = 1.0
y_pred = model(encoder_outputs, output_lengths)
loss = criterion(y_pred, (mel_target, gate_target))
loss.backward()
