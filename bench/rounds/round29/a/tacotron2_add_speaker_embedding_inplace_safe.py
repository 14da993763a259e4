# label: safe
# why: encoder_outputs comes out of pad_packed_sequence (a fresh padded copy that no backward node saved), and speaker_embeddings.unsqueeze_ only restrides the embedding output, so both in-place ops leave every saved tensor untouched.
# source: https://github.com/coqui-ai/TTS/commit/22e84294387026d49ae55b0602461a2ff3f5f92e (removed in-place changes; pre-fix models/tacotron2.py _add_speaker_embedding)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, in_features=16):
        super(Encoder, self).__init__()
        self.convolutions = nn.Sequential(
            nn.Conv1d(in_features, in_features, 5, padding=2),
            nn.BatchNorm1d(in_features),
            nn.ReLU(),
        )
        self.lstm = nn.LSTM(in_features, int(in_features / 2), num_layers=1,
                            batch_first=True, bidirectional=True)

    def forward(self, x, input_lengths):
        x = self.convolutions(x)
        x = x.transpose(1, 2)
        x = nn.utils.rnn.pack_padded_sequence(x, input_lengths, batch_first=True)
        self.lstm.flatten_parameters()
        outputs, _ = self.lstm(x)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs


class Tacotron2(nn.Module):
    def __init__(self, num_chars=20, num_speakers=3, embed_dim=16):
        super(Tacotron2, self).__init__()
        self.embedding = nn.Embedding(num_chars, embed_dim)
        self.encoder = Encoder(embed_dim)
        if num_speakers > 1:
            self.speaker_embedding = nn.Embedding(num_speakers, embed_dim)
        self.decoder = nn.Linear(embed_dim, 8)

    def _add_speaker_embedding(self, encoder_outputs, speaker_ids):
        if hasattr(self, "speaker_embedding") and speaker_ids is not None:
            speaker_embeddings = self.speaker_embedding(speaker_ids)

            speaker_embeddings.unsqueeze_(1)
            speaker_embeddings = speaker_embeddings.expand(encoder_outputs.size(0),
                                                           encoder_outputs.size(1),
                                                           -1)
            encoder_outputs += speaker_embeddings
        return encoder_outputs

    def forward(self, text, text_lengths, speaker_ids=None):
        embedded_inputs = self.embedding(text).transpose(1, 2)
        encoder_outputs = self.encoder(embedded_inputs, text_lengths)
        encoder_outputs = self._add_speaker_embedding(encoder_outputs, speaker_ids)
        mel_outputs = self.decoder(encoder_outputs)
        return mel_outputs


def main():
    model = Tacotron2()
    text = torch.randint(1, 20, (2, 7))
    text_lengths = torch.tensor([7, 5])
    speaker_ids = torch.tensor([0, 2])
    mel_outputs = model(text, text_lengths, speaker_ids)
    loss = mel_outputs.pow(2).mean()
    loss.backward()
    return mel_outputs.detach(), model.speaker_embedding.weight.grad.clone(), model.embedding.weight.grad.clone()


mel, g_spk, g_emb = main()
