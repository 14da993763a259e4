# label: hazard silent
# why: ConditionalInput.forward adds the speaker embedding into signal in place, and FastPitchModule passes the same enc_out to duration_predictor and then pitch_predictor and regulate_len, so the later readers silently see enc_out with the speaker embedding already added (twice for the pitch predictor).
# source: https://github.com/NVIDIA/NeMo/commit/507ae1b36d192e519ac86e1649ed27b339c88e03
import torch
import torch.nn as nn

torch.manual_seed(0)


def mask_from_lens(lens, max_len=None):
    if max_len is None:
        max_len = lens.max()
    ids = torch.arange(0, max_len, device=lens.device, dtype=lens.dtype)
    mask = torch.lt(ids, lens.unsqueeze(1))
    return mask


class ConditionalInput(torch.nn.Module):
    """
    This module is used to condition any model inputs.
    If we don't have any conditions, this will be a normal pass.
    """

    def __init__(self, hidden_dim, condition_dim, condition_types=[]):
        super().__init__()
        self.support_types = ["add", "concat"]
        self.condition_types = [tp for tp in condition_types if tp in self.support_types]
        self.hidden_dim = hidden_dim
        self.condition_dim = condition_dim
        if "add" in self.condition_types and condition_dim != hidden_dim:
            self.add_proj = torch.nn.Linear(condition_dim, hidden_dim)

    def forward(self, signal, conditioning=None):
        """
        signal: B x T x C
        conditioning: B x 1 x C
        """
        if len(self.condition_types) > 0 and conditioning is None:
            raise ValueError('You should add additional data types as conditions e.g. speaker id or reference audio')

        if "add" in self.condition_types:
            if self.condition_dim != self.hidden_dim:
                conditioning = self.add_proj(conditioning)
            signal += conditioning  # <-- IPL004

        return signal


class PositionalEmbedding(nn.Module):
    def __init__(self, demb):
        super().__init__()
        self.demb = demb
        inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))
        self.register_buffer('inv_freq', inv_freq)

    def forward(self, pos_seq):
        sinusoid_inp = torch.ger(pos_seq, self.inv_freq)
        return torch.cat([sinusoid_inp.sin(), sinusoid_inp.cos()], dim=1)[None, :, :]


class FFTransformerEncoder(nn.Module):
    def __init__(self, d_model, n_embed, padding_idx, condition_types=[]):
        super().__init__()
        self.word_emb = nn.Embedding(n_embed, d_model, padding_idx=padding_idx)
        self.padding_idx = padding_idx
        self.pos_emb = PositionalEmbedding(d_model)
        self.cond_input = ConditionalInput(d_model, d_model, condition_types)
        self.pos_ff = nn.Sequential(nn.Conv1d(d_model, d_model, 3, padding=1), nn.ReLU())
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, input, conditioning=None):
        mask = (input != self.padding_idx).unsqueeze(2)
        inp = self.word_emb(input)
        pos_seq = torch.arange(inp.size(1), device=inp.device).to(inp.dtype)
        pos_emb = self.pos_emb(pos_seq) * mask
        inp += pos_emb
        inp = self.cond_input(inp, conditioning)
        core_out = self.pos_ff(inp.transpose(1, 2)).transpose(1, 2)
        output = self.layer_norm(inp + core_out)
        output *= mask
        return output, mask


class TemporalPredictor(nn.Module):
    """Predicts a single float per each temporal location"""

    def __init__(self, input_size, filter_size, condition_types=[]):
        super().__init__()
        self.cond_input = ConditionalInput(input_size, input_size, condition_types)
        self.layers = nn.Sequential(nn.Conv1d(input_size, filter_size, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(filter_size, 1, bias=True)

    def forward(self, enc, enc_mask, conditioning=None):
        enc = self.cond_input(enc, conditioning)
        out = enc * enc_mask
        out = self.layers(out.transpose(1, 2)).transpose(1, 2)
        out = self.fc(out) * enc_mask
        return out.squeeze(-1)


class FastPitchModule(nn.Module):
    def __init__(self, d_model=8, n_speakers=2, condition_types=["add"]):
        super().__init__()
        self.encoder = FFTransformerEncoder(d_model, 12, 0, condition_types)
        self.speaker_emb = nn.Embedding(n_speakers, d_model)
        self.duration_predictor = TemporalPredictor(d_model, 6, condition_types)
        self.pitch_predictor = TemporalPredictor(d_model, 6, condition_types)
        self.pitch_emb = nn.Conv1d(1, d_model, kernel_size=3, padding=1)

    def forward(self, text, durs, pitch, speaker):
        spk_emb = self.speaker_emb(speaker).unsqueeze(1)
        enc_out, enc_mask = self.encoder(input=text, conditioning=spk_emb)
        log_durs_predicted = self.duration_predictor(enc_out, enc_mask, conditioning=spk_emb)
        pitch_predicted = self.pitch_predictor(enc_out, enc_mask, conditioning=spk_emb)
        pitch_emb = self.pitch_emb(pitch.unsqueeze(1))
        enc_out = enc_out + pitch_emb.transpose(1, 2)
        len_regulated = torch.repeat_interleave(enc_out[0], durs[0], dim=0)
        return len_regulated, log_durs_predicted, pitch_predicted


def main():
    model = FastPitchModule()
    text = torch.tensor([[3, 5, 7, 2, 0], [4, 4, 9, 0, 0]])
    durs = torch.tensor([[2, 1, 3, 1, 0], [1, 2, 2, 0, 0]])
    pitch = torch.randn(2, 5)
    speaker = torch.tensor([0, 1])
    len_regulated, log_durs_predicted, pitch_predicted = model(text, durs, pitch, speaker)
    dur_loss = (log_durs_predicted - torch.log1p(durs.float())).pow(2).mean()
    pitch_loss = (pitch_predicted - pitch).pow(2).mean()
    loss = dur_loss + pitch_loss + len_regulated.pow(2).mean()
    loss.backward()
    return loss.detach(), pitch_predicted.detach(), model.speaker_emb.weight.grad


loss, pitch_predicted, speaker_grad = main()
