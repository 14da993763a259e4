# label: hazard raises
# why: parse_output masked_fill_'s outputs[0] (mel_outputs) in place after the postnet's first Conv1d saved it as its input, so backward finds a tensor at a newer version.
# source: https://github.com/pytorch/pytorch/issues/93440
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_mask_from_lengths(lengths):
    max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len)
    mask = (ids < lengths.unsqueeze(1)).bool()
    return mask


class ConvNorm(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2)

    def forward(self, signal):
        return self.conv(signal)


class Postnet(nn.Module):
    def __init__(self, n_mel_channels, postnet_embedding_dim, postnet_kernel_size, postnet_n_convolutions):
        super().__init__()
        self.convolutions = nn.ModuleList()
        self.convolutions.append(nn.Sequential(
            ConvNorm(n_mel_channels, postnet_embedding_dim, postnet_kernel_size),
            nn.BatchNorm1d(postnet_embedding_dim)))
        for i in range(1, postnet_n_convolutions - 1):
            self.convolutions.append(nn.Sequential(
                ConvNorm(postnet_embedding_dim, postnet_embedding_dim, postnet_kernel_size),
                nn.BatchNorm1d(postnet_embedding_dim)))
        self.convolutions.append(nn.Sequential(
            ConvNorm(postnet_embedding_dim, n_mel_channels, postnet_kernel_size),
            nn.BatchNorm1d(n_mel_channels)))

    def forward(self, x):
        for i in range(len(self.convolutions) - 1):
            x = torch.tanh(self.convolutions[i](x))
        x = self.convolutions[-1](x)
        return x


class Decoder(nn.Module):
    def __init__(self, n_mel_channels, encoder_embedding_dim):
        super().__init__()
        self.n_mel_channels = n_mel_channels
        self.linear_projection = nn.Linear(encoder_embedding_dim + n_mel_channels, n_mel_channels)
        self.gate_layer = nn.Linear(encoder_embedding_dim + n_mel_channels, 1)

    def parse_decoder_outputs(self, mel_outputs, gate_outputs, alignments):
        alignments = torch.stack(alignments).transpose(0, 1)
        gate_outputs = torch.stack(gate_outputs).transpose(0, 1).contiguous()
        mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous()
        mel_outputs = mel_outputs.view(mel_outputs.size(0), -1, self.n_mel_channels)
        mel_outputs = mel_outputs.transpose(1, 2)
        return mel_outputs, gate_outputs, alignments

    def forward(self, memory, decoder_inputs, memory_lengths):
        decoder_inputs = decoder_inputs.transpose(1, 2)  # B, T, n_mel
        go = torch.zeros(memory.size(0), 1, self.n_mel_channels)
        decoder_inputs = torch.cat((go, decoder_inputs[:, :-1]), dim=1)
        context = memory.mean(dim=1)
        mel_outputs, gate_outputs, alignments = [], [], []
        for t in range(decoder_inputs.size(1)):
            h = torch.cat((decoder_inputs[:, t], context), dim=-1)
            mel_outputs += [self.linear_projection(h)]
            gate_outputs += [self.gate_layer(h).squeeze(1)]
            alignments += [torch.softmax(memory.sum(-1), dim=1)]
        return self.parse_decoder_outputs(mel_outputs, gate_outputs, alignments)


class Tacotron2(nn.Module):
    def __init__(self, n_symbols=10, embed=8, n_mel_channels=4):
        super().__init__()
        self.mask_padding = True
        self.n_mel_channels = n_mel_channels
        self.embedding = nn.Embedding(n_symbols, embed)
        self.encoder = nn.Conv1d(embed, embed, 3, padding=1)
        self.decoder = Decoder(n_mel_channels, embed)
        self.postnet = Postnet(n_mel_channels, 6, 3, 3)

    def parse_output(self, outputs, output_lengths):
        if self.mask_padding and output_lengths is not None:
            mask = ~get_mask_from_lengths(output_lengths)
            mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
            mask = mask.permute(1, 0, 2)

            outputs[0].masked_fill_(mask, 0.0)  # <-- IPL001: mel_outputs was saved as the postnet conv input
            outputs[1].masked_fill_(mask, 0.0)
            outputs[2].masked_fill_(mask[:, 0, :], 1e3)  # gate energies

        return outputs

    def forward(self, inputs):
        text_inputs, text_lengths, mels, max_len, output_lengths = inputs
        embedded_inputs = self.embedding(text_inputs).transpose(1, 2)
        encoder_outputs = torch.relu(self.encoder(embedded_inputs)).transpose(1, 2)
        mel_outputs, gate_outputs, alignments = self.decoder(encoder_outputs, mels, memory_lengths=text_lengths)

        mel_outputs_postnet = self.postnet(mel_outputs)
        mel_outputs_postnet = mel_outputs + mel_outputs_postnet

        return self.parse_output([mel_outputs, mel_outputs_postnet, gate_outputs, alignments], output_lengths)


class Tacotron2Loss(nn.Module):
    def forward(self, model_output, targets):
        mel_target, gate_target = targets[0], targets[1]
        gate_target = gate_target.view(-1, 1)
        mel_out, mel_out_postnet, gate_out, _ = model_output
        gate_out = gate_out.view(-1, 1)
        mel_loss = nn.MSELoss()(mel_out, mel_target) + nn.MSELoss()(mel_out_postnet, mel_target)
        gate_loss = nn.BCEWithLogitsLoss()(gate_out, gate_target)
        return mel_loss + gate_loss


model = Tacotron2()
criterion = Tacotron2Loss()
text = torch.randint(0, 10, (2, 5))
text_lengths = torch.tensor([5, 4])
mel_padded = torch.randn(2, 4, 6)
output_lengths = torch.tensor([6, 4])
gate_padded = torch.zeros(2, 6)
gate_padded[0, 5] = 1.0
gate_padded[1, 3:] = 1.0

y_pred = model((text, text_lengths, mel_padded, 6, output_lengths))
loss = criterion(y_pred, (mel_padded, gate_padded))
loss.backward()
