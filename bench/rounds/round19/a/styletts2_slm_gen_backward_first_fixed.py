# label: safe
# why: the fixed order runs loss_gen_lm.backward() before the discriminator step, so the in-place weight update happens only after every graph through the old weights was consumed.
# source: https://github.com/yl4579/StyleTTS2/pull/74 (commit 19f679f4bb2e87523257c484aa5573c743672994)
import torch
import torch.nn as nn

torch.manual_seed(0)


class WavLMDiscriminator(nn.Module):
    def __init__(self, slm_hidden=8, slm_layers=3, initial_channel=6):
        super().__init__()
        self.pre = nn.Conv1d(slm_hidden * slm_layers, initial_channel, 1)
        self.convs = nn.ModuleList([
            nn.Conv1d(initial_channel, initial_channel * 2, 3, padding=1),
            nn.Conv1d(initial_channel * 2, initial_channel * 2, 3, padding=1),
        ])
        self.conv_post = nn.Conv1d(initial_channel * 2, 1, 3, padding=1)

    def forward(self, x):
        x = self.pre(x)
        for l in self.convs:
            x = torch.nn.functional.leaky_relu(l(x), 0.1)
        x = self.conv_post(x)
        return torch.flatten(x, 1, -1)


class WavLMLoss(nn.Module):
    def __init__(self, wavlm, wd):
        super().__init__()
        self.wavlm = wavlm
        self.wd = wd

    def _embed(self, wav):
        hidden_states = [layer(wav) for layer in self.wavlm]
        return torch.stack(hidden_states, dim=1).flatten(start_dim=1, end_dim=2)

    def generator(self, y_rec):
        y_rec_embeddings = self._embed(y_rec)
        y_df_hat_g = self.wd(y_rec_embeddings)
        return torch.mean((1 - y_df_hat_g) ** 2)

    def discriminator(self, wav, y_rec):
        with torch.no_grad():
            y_embeddings = self._embed(wav)
            y_rec_embeddings = self._embed(y_rec)
        y_d_rs = self.wd(y_embeddings)
        y_d_gs = self.wd(y_rec_embeddings)
        r_loss = torch.mean((1 - y_d_rs) ** 2)
        g_loss = torch.mean((y_d_gs) ** 2)
        return (r_loss + g_loss).mean()


class SLMAdversarialLoss(nn.Module):
    def __init__(self, decoder, wl):
        super().__init__()
        self.decoder = decoder
        self.wl = wl

    def forward(self, waves, s_trg):
        y_pred = self.decoder(s_trg)
        d_loss = self.wl.discriminator(waves.detach(), y_pred.detach()).mean()
        gen_loss = self.wl.generator(y_pred)
        return d_loss, gen_loss, y_pred.detach()


class MultiOptimizer:
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def zero_grad(self):
        for opt in self.optimizers.values():
            opt.zero_grad()

    def step(self, key):
        self.optimizers[key].step()


wavlm = nn.ModuleList([nn.Conv1d(1, 8, 5, padding=2) for _ in range(3)])
for p in wavlm.parameters():
    p.requires_grad_(False)
wd = WavLMDiscriminator()
decoder = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 32), nn.Unflatten(1, (1, 32)))
model = {"decoder": decoder, "wd": wd}
optimizer = MultiOptimizer({k: torch.optim.AdamW(m.parameters(), lr=1e-3) for k, m in model.items()})
slmadv = SLMAdversarialLoss(decoder, WavLMLoss(wavlm, wd))

waves = torch.randn(2, 1, 32)
s_trg = torch.randn(2, 4)

slm_out = slmadv(waves, s_trg)
d_loss_slm, loss_gen_lm, y_pred = slm_out

# SLM generator loss
optimizer.zero_grad()
loss_gen_lm.backward()
optimizer.step('decoder')

# SLM discriminator loss
if d_loss_slm != 0:
    optimizer.zero_grad()
    d_loss_slm.backward(retain_graph=True)
    optimizer.step('wd')
