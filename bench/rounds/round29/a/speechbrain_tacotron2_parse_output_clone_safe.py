# label: safe
# why: the committed fix masks a clone of mel_outputs, so the tensor the Postnet conv saved is never written; only the fresh add output and the contiguous gate copy are filled in place.
# source: https://github.com/speechbrain/speechbrain/commit/9f1c834742be56533b736546e5d218f8b21c61e5 (fix torch 1.11 pb with clone(); pre-fix speechbrain/lobes/models/Tacotron2.py parse_output)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_mask_from_lengths(lengths, max_len=None):
    if max_len is None:
        max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len, device=lengths.device, dtype=lengths.dtype)
    mask = (ids < lengths.unsqueeze(1)).byte()
    mask = torch.le(mask, 0)
    return mask


class Postnet(nn.Module):
    def __init__(self, n_mel_channels=8, postnet_embedding_dim=16, postnet_kernel_size=5, postnet_n_convolutions=3):
        super().__init__()
        self.convolutions = nn.ModuleList()
        self.convolutions.append(nn.Sequential(
            nn.Conv1d(n_mel_channels, postnet_embedding_dim, postnet_kernel_size, padding=(postnet_kernel_size - 1) // 2),
            nn.BatchNorm1d(postnet_embedding_dim)))
        for i in range(1, postnet_n_convolutions - 1):
            self.convolutions.append(nn.Sequential(
                nn.Conv1d(postnet_embedding_dim, postnet_embedding_dim, postnet_kernel_size, padding=(postnet_kernel_size - 1) // 2),
                nn.BatchNorm1d(postnet_embedding_dim)))
        self.convolutions.append(nn.Sequential(
            nn.Conv1d(postnet_embedding_dim, n_mel_channels, postnet_kernel_size, padding=(postnet_kernel_size - 1) // 2),
            nn.BatchNorm1d(n_mel_channels)))
        self.n_convs = len(self.convolutions)

    def forward(self, x):
        i = 0
        for conv in self.convolutions:
            if i < self.n_convs - 1:
                x = F.dropout(torch.tanh(conv(x)), 0.5, training=self.training)
            else:
                x = F.dropout(conv(x), 0.5, training=self.training)
            i += 1
        return x


class Decoder(nn.Module):
    def __init__(self, encoder_dim=16, n_mel_channels=8):
        super().__init__()
        self.proj = nn.Linear(encoder_dim + n_mel_channels, n_mel_channels)
        self.gate = nn.Linear(encoder_dim + n_mel_channels, 1)
        self.n_mel_channels = n_mel_channels

    def forward(self, memory, targets):
        context = memory.mean(dim=1)
        mel_outputs, gate_outputs = [], []
        prev = torch.zeros(memory.size(0), self.n_mel_channels)
        for t in range(targets.size(2)):
            h = torch.cat([context, prev], dim=-1)
            mel_outputs.append(self.proj(h))
            gate_outputs.append(self.gate(h).squeeze(1))
            prev = targets[:, :, t]
        gate_outputs = torch.stack(gate_outputs).transpose(0, 1).contiguous()
        mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous()
        mel_outputs = mel_outputs.transpose(1, 2)
        alignments = torch.zeros(memory.size(0), targets.size(2), memory.size(1))
        return mel_outputs, gate_outputs, alignments


class Tacotron2(nn.Module):
    def __init__(self, n_symbols=20, symbols_embedding_dim=16, n_mel_channels=8, mask_padding=True):
        super().__init__()
        self.mask_padding = mask_padding
        self.n_mel_channels = n_mel_channels
        self.embedding = nn.Embedding(n_symbols, symbols_embedding_dim)
        self.encoder = nn.Conv1d(symbols_embedding_dim, symbols_embedding_dim, 3, padding=1)
        self.decoder = Decoder(symbols_embedding_dim, n_mel_channels)
        self.postnet = Postnet(n_mel_channels)

    def parse_output(self, outputs, output_lengths, alignments_dim=None):
        mel_outputs, mel_outputs_postnet, gate_outputs, alignments = outputs
        if self.mask_padding and output_lengths is not None:
            mask = get_mask_from_lengths(output_lengths, max_len=mel_outputs.size(-1))
            mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
            mask = mask.permute(1, 0, 2)

            mel_outputs.clone().masked_fill_(mask, 0.0)
            mel_outputs_postnet.masked_fill_(mask, 0.0)
            gate_outputs.masked_fill_(mask[:, 0, :], 1e3)
        if alignments_dim is not None:
            alignments = F.pad(alignments, (0, alignments_dim - alignments.size(-1)))
        return mel_outputs, mel_outputs_postnet, gate_outputs, alignments

    def forward(self, inputs, alignments_dim=None):
        inputs, input_lengths, targets, max_len, output_lengths = inputs
        embedded_inputs = self.embedding(inputs).transpose(1, 2)
        encoder_outputs = self.encoder(embedded_inputs).transpose(1, 2)
        mel_outputs, gate_outputs, alignments = self.decoder(encoder_outputs, targets)
        mel_outputs_postnet = self.postnet(mel_outputs)
        mel_outputs_postnet = mel_outputs + mel_outputs_postnet
        return self.parse_output(
            [mel_outputs, mel_outputs_postnet, gate_outputs, alignments],
            output_lengths,
            alignments_dim,
        )


def main():
    model = Tacotron2()
    model.train()
    inputs = torch.randint(1, 20, (2, 6))
    input_lengths = torch.tensor([6, 4])
    targets = torch.randn(2, 8, 10)
    output_lengths = torch.tensor([10, 7])
    mel_out, mel_out_postnet, gate_out, _ = model((inputs, input_lengths, targets, 10, output_lengths))
    gate_target = torch.zeros_like(gate_out)
    loss = F.mse_loss(mel_out, targets) + F.mse_loss(mel_out_postnet, targets) \
        + F.binary_cross_entropy_with_logits(gate_out, gate_target)
    loss.backward()
    return loss.detach(), model.embedding.weight.grad.clone()


loss, grad = main()
