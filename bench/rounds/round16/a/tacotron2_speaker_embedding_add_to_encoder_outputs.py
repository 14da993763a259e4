# label: safe
# why: the speaker embedding is unsqueezed in place and added with += to the padded BiLSTM encoder outputs; pad_packed_sequence returns a fresh tensor that no backward formula saved and the embedding output is not saved either, so gradients reach the encoder and the speaker table unchanged (the upstream edit was a precautionary cleanup).
# source: https://github.com/coqui-ai/TTS/commit/81c5df71f6e0b68189de35947b68b8423a90c7f7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvBNBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm1d(out_channels)

    def forward(self, x):
        return F.dropout(F.relu(self.bn(self.conv(x))), 0.5, self.training)


class Encoder(nn.Module):
    def __init__(self, in_features=16):
        super().__init__()
        self.convolutions = nn.Sequential(*[ConvBNBlock(in_features, in_features, 5) for _ in range(2)])
        self.lstm = nn.LSTM(in_features, in_features // 2, num_layers=1, batch_first=True, bidirectional=True)

    def forward(self, x, input_lengths):
        x = self.convolutions(x)
        x = x.transpose(1, 2)
        x = nn.utils.rnn.pack_padded_sequence(x, input_lengths.cpu().numpy(), batch_first=True)
        outputs, _ = self.lstm(x)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs


class Tacotron2Lite(nn.Module):
    def __init__(self, num_chars=20, num_speakers=3, dim=16, n_mels=8):
        super().__init__()
        self.embedding = nn.Embedding(num_chars, dim)
        self.encoder = Encoder(dim)
        self.speaker_embedding = nn.Embedding(num_speakers, dim)
        self.decoder = nn.Linear(dim, n_mels)

    def _add_speaker_embedding(self, encoder_outputs, speaker_ids):
        speaker_embeddings = self.speaker_embedding(speaker_ids)
        speaker_embeddings.unsqueeze_(1)
        speaker_embeddings = speaker_embeddings.expand(encoder_outputs.size(0), encoder_outputs.size(1), -1)
        encoder_outputs += speaker_embeddings
        return encoder_outputs

    def forward(self, text, text_lengths, speaker_ids):
        embedded_inputs = self.embedding(text).transpose(1, 2)
        encoder_outputs = self.encoder(embedded_inputs, text_lengths)
        encoder_outputs = self._add_speaker_embedding(encoder_outputs, speaker_ids)
        return self.decoder(encoder_outputs)


model = Tacotron2Lite().eval()
text = torch.randint(0, 20, (2, 7))
text_lengths = torch.tensor([7, 5])
speaker_ids = torch.tensor([0, 2])
mel_target = torch.randn(2, 7, 8)

mel_out = model(text, text_lengths, speaker_ids)
loss = F.l1_loss(mel_out, mel_target)
loss.backward()
speaker_grad = model.speaker_embedding.weight.grad.clone()
lstm_grad = model.encoder.lstm.weight_ih_l0.grad.clone()
