# label: safe
# why: Hanasu's voice-conversion training loop builds sid_src and sid_tgt with speaker_id.clone() before overwriting single entries of sid_src with a different speaker (`sid_src[i] = different_speaker`), so the target ids and the batch's speaker_id keep their values while the source ids change.
# source: https://github.com/yukiarimo/hanasu/commit/d9c5d6c67e9c574172042f1352be3e96eefcc5b0
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class HParams(object):
    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, HParams(**v) if isinstance(v, dict) else v)


hps = HParams(
    train=dict(same_speaker_prob=0.5, segment_size=64, learning_rate=2e-4, c_mel=45, c_kl=1.0),
    data=dict(hop_length=16, n_mels=8),
    model=dict(hidden_channels=16, gin_channels=8),
)


class VoiceDataset(object):
    """Minimal stand-in for the speaker bookkeeping of the training dataset."""

    def __init__(self, speakers):
        self.speakers = speakers
        self.speaker_to_id = {s: i for i, s in enumerate(speakers)}

    def get_random_speaker(self, exclude_speaker=None):
        """Get a random speaker ID different from exclude_speaker"""
        available_speakers = [s for s in self.speakers if s != exclude_speaker]
        if not available_speakers:
            return None  # No other speakers available
        random_speaker = random.choice(available_speakers)
        return self.speaker_to_id[random_speaker]


class PosteriorEncoder(nn.Module):
    def __init__(self, in_channels, out_channels, hidden_channels, gin_channels):
        super().__init__()
        self.pre = nn.Conv1d(in_channels, hidden_channels, 1)
        self.cond = nn.Conv1d(gin_channels, hidden_channels, 1)
        self.proj = nn.Conv1d(hidden_channels, out_channels * 2, 1)

    def forward(self, y, g):
        h = torch.tanh(self.pre(y) + self.cond(g))
        m, logs = torch.chunk(self.proj(h), 2, dim=1)
        z = m + torch.randn_like(m) * torch.exp(logs)
        return z, m, logs


class Flow(nn.Module):
    def __init__(self, channels, gin_channels):
        super().__init__()
        self.cond = nn.Conv1d(gin_channels, channels, 1)

    def forward(self, z, g, reverse=False):
        shift = self.cond(g)
        return z - shift if reverse else z + shift


class Generator(nn.Module):
    def __init__(self, in_channels, hop_length, gin_channels):
        super().__init__()
        self.cond = nn.Conv1d(gin_channels, in_channels, 1)
        self.up = nn.ConvTranspose1d(in_channels, 1, hop_length, stride=hop_length)

    def forward(self, z, g):
        return torch.tanh(self.up(z + self.cond(g)))


class SynthesizerTrn(nn.Module):
    def __init__(self, n_speakers, n_mels, hidden_channels, gin_channels, hop_length):
        super().__init__()
        self.n_speakers = n_speakers
        self.emb_g = nn.Embedding(n_speakers, gin_channels)
        self.enc_q = PosteriorEncoder(n_mels, hidden_channels, hidden_channels, gin_channels)
        self.flow = Flow(hidden_channels, gin_channels)
        self.dec = Generator(hidden_channels, hop_length, gin_channels)

    def forward(self, x, y, sid_src=None, sid_tgt=None):
        g_src = self.emb_g(sid_src).unsqueeze(-1)  # [B, gin_channels, 1]
        g_tgt = self.emb_g(sid_tgt).unsqueeze(-1)  # [B, gin_channels, 1]

        # Posterior encoder q(z|y, g_tgt)
        z, m_q, logs_q = self.enc_q(y, g=g_tgt)
        z_p = self.flow(z, g=g_tgt)
        # convert: remove target timbre, add source timbre
        z_hat = self.flow(z_p, g=g_src, reverse=True)
        y_hat = self.dec(z_hat, g=g_src)
        return y_hat, z_p, m_q, logs_q


def train_step(model, optimizer, x, y, sid_src, sid_tgt, hps):
    optimizer.zero_grad(set_to_none=True)
    y_hat, z_p, m_q, logs_q = model(x, y, sid_src=sid_src, sid_tgt=sid_tgt)
    loss_mel = F.l1_loss(y_hat, x) * hps.train.c_mel
    loss_kl = (0.5 * (z_p ** 2) - logs_q).mean() * hps.train.c_kl
    loss = loss_mel + loss_kl
    loss.backward()
    optimizer.step()
    return {"loss": loss.detach(), "mel": loss_mel.detach(), "kl": loss_kl.detach()}


def main():
    torch.manual_seed(0)
    random.seed(0)
    train_dataset = VoiceDataset(["yuki", "hana", "sora", "ren"])
    model = SynthesizerTrn(len(train_dataset.speakers), hps.data.n_mels, hps.model.hidden_channels,
                           hps.model.gin_channels, hps.data.hop_length)
    optimizer = torch.optim.AdamW(model.parameters(), hps.train.learning_rate)

    batches = []
    for _ in range(3):
        x = torch.randn(4, 1, hps.train.segment_size) * 0.3
        y = torch.randn(4, hps.data.n_mels, hps.train.segment_size // hps.data.hop_length)
        speaker_id = torch.randint(0, len(train_dataset.speakers), (4,))
        batches.append((x, y, speaker_id))

    history = []
    for batch_idx, (x, y, speaker_id) in enumerate(batches):
        # For each sample in the batch, randomly decide if we use the same speaker
        # or a different speaker for source and target
        sid_src = speaker_id.clone()
        sid_tgt = speaker_id.clone()

        for i in range(len(speaker_id)):
            if random.random() > hps.train.same_speaker_prob:
                # Get a random speaker different from the current one
                different_speaker = train_dataset.get_random_speaker(
                    exclude_speaker=train_dataset.speakers[speaker_id[i].item()])
                if different_speaker is not None:
                    sid_src[i] = different_speaker

        metrics = train_step(model, optimizer, x, y, sid_src, sid_tgt, hps)
        history.append(torch.stack([metrics["loss"], metrics["mel"], metrics["kl"]]))
        history.append(torch.stack([sid_src, sid_tgt, speaker_id]).float())
    return torch.stack(history[::2]), torch.cat(history[1::2]), model.emb_g.weight.detach().clone()


losses, speaker_ids, speaker_table = main()
print(losses)
print(speaker_ids)
