# label: hazard raises no-twin
# why: optimizer.step('wd') updates the WavLM discriminator in place after the SLM discriminator loss is backpropagated, but loss_gen_lm was built earlier through the same discriminator, whose convolutions saved those weights, so its backward fails on the changed version.
# source: https://github.com/yl4579/StyleTTS2/commit/a727e7fba83ff940847f3fbb907d232ebfb67c47
import torch
from torch import nn
import torch.nn.functional as F
from functools import reduce

torch.manual_seed(0)


class MultiOptimizer:
    def __init__(self, optimizers={}, schedulers={}):
        self.optimizers = optimizers
        self.schedulers = schedulers
        self.keys = list(optimizers.keys())
        self.param_groups = reduce(lambda x, y: x + y, [v.param_groups for v in self.optimizers.values()])

    def step(self, key=None, scaler=None):
        keys = [key] if key is not None else self.keys
        _ = [self._step(key, scaler) for key in keys]

    def _step(self, key, scaler=None):
        self.optimizers[key].step()

    def zero_grad(self, key=None):
        if key is not None:
            self.optimizers[key].zero_grad()
        else:
            _ = [self.optimizers[key].zero_grad() for key in self.keys]


class WavLMStub(nn.Module):
    """Frozen SLM feature extractor returning a tuple of hidden states."""

    def __init__(self, dim=8, n_layers=2):
        super().__init__()
        self.feature = nn.Conv1d(1, dim, 10, stride=5)
        self.layers = nn.ModuleList([nn.Conv1d(dim, dim, 3, padding=1) for _ in range(n_layers)])
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, input_values, output_hidden_states=True):
        h = self.feature(input_values.unsqueeze(1))
        hidden_states = [h.transpose(1, 2)]
        for layer in self.layers:
            h = F.gelu(layer(h))
            hidden_states.append(h.transpose(1, 2))

        class Out:
            pass
        out = Out()
        out.hidden_states = tuple(hidden_states)
        return out


class WavLMDiscriminator(nn.Module):
    def __init__(self, slm_hidden=8, slm_layers=3, initial_channel=16):
        super().__init__()
        self.pre = nn.Conv1d(slm_hidden * slm_layers, initial_channel, 1)
        self.convs = nn.ModuleList([nn.Conv1d(initial_channel, initial_channel, 5, padding=2)])
        self.conv_post = nn.Conv1d(initial_channel, 1, 3, padding=1)

    def forward(self, x):
        x = self.pre(x)
        for l in self.convs:
            x = F.leaky_relu(l(x), 0.1)
        x = self.conv_post(x)
        return torch.flatten(x, 1, -1)


class WavLMLoss(torch.nn.Module):
    def __init__(self, wavlm, wd):
        super(WavLMLoss, self).__init__()
        self.wavlm = wavlm
        self.wd = wd
        self.resample = nn.Identity()

    def generator(self, y_rec):
        y_rec_16 = self.resample(y_rec)
        y_rec_embeddings = self.wavlm(input_values=y_rec_16, output_hidden_states=True).hidden_states
        y_rec_embeddings = torch.stack(y_rec_embeddings, dim=1).transpose(-1, -2).flatten(start_dim=1, end_dim=2)
        y_df_hat_g = self.wd(y_rec_embeddings)
        loss_gen = torch.mean((1 - y_df_hat_g) ** 2)
        return loss_gen

    def discriminator(self, wav, y_rec):
        with torch.no_grad():
            wav_16 = self.resample(wav)
            wav_embeddings = self.wavlm(input_values=wav_16, output_hidden_states=True).hidden_states
            y_rec_16 = self.resample(y_rec)
            y_rec_embeddings = self.wavlm(input_values=y_rec_16, output_hidden_states=True).hidden_states
            y_embeddings = torch.stack(wav_embeddings, dim=1).transpose(-1, -2).flatten(start_dim=1, end_dim=2)
            y_rec_embeddings = torch.stack(y_rec_embeddings, dim=1).transpose(-1, -2).flatten(start_dim=1, end_dim=2)
        y_d_rs = self.wd(y_embeddings)
        y_d_gs = self.wd(y_rec_embeddings)
        r_loss = torch.mean((1 - y_d_rs) ** 2)
        g_loss = torch.mean((y_d_gs) ** 2)
        loss_disc_f = r_loss + g_loss
        return loss_disc_f.mean()


class SLMAdversarialLoss(torch.nn.Module):
    def __init__(self, model, wl):
        super().__init__()
        self.model = model
        self.wl = wl

    def forward(self, text_emb, wav):
        # the prosody predictor + decoder synthesise speech from out-of-distribution text
        dur = self.model['predictor'](text_emb)
        y_pred = self.model['decoder'](dur).squeeze(1)
        # discriminator loss
        d_loss = self.wl.discriminator(wav.detach().squeeze(), y_pred.detach().squeeze()).mean()
        # generator loss
        gen_loss = self.wl.generator(y_pred.squeeze())
        gen_loss = gen_loss.mean()
        return d_loss, gen_loss, y_pred.detach()


def main():
    model = nn.ModuleDict({
        'predictor': nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.Tanh()),
        'decoder': nn.Sequential(nn.ConvTranspose1d(8, 1, 20, stride=10)),
        'wd': WavLMDiscriminator(),
    })
    wl = WavLMLoss(WavLMStub(), model['wd'])
    slmadv = SLMAdversarialLoss(model, wl)
    optimizer = MultiOptimizer({key: torch.optim.AdamW(model[key].parameters(), lr=1e-3) for key in model.keys()})

    text_emb = torch.randn(2, 4, 12)
    waves = torch.randn(2, 1, 130)
    slm_out = slmadv(text_emb, waves)
    d_loss_slm, loss_gen_lm, y_pred = slm_out

    # SLM discriminator loss
    if d_loss_slm != 0:
        optimizer.zero_grad()
        d_loss_slm.backward()
        optimizer.step('wd')  # <-- IPL001

    # SLM generator loss
    optimizer.zero_grad()
    loss_gen_lm.backward()

    # gradient scaling
    for p in model['predictor'].parameters():
        if p.grad is not None:
            p.grad *= 0.01
    optimizer.step('predictor')
    optimizer.step('decoder')
    return loss_gen_lm.detach(), d_loss_slm.detach(), model['predictor'][0].weight.detach(), model['wd'].pre.weight.detach()


loss_gen_lm, d_loss_slm, predictor_weight, wd_weight = main()
