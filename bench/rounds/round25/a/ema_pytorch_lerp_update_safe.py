# label: safe no-twin
# why: update_moving_average lerps the EMA copy's parameters in place under no_grad; the EMA model is a requires_grad(False) deepcopy that never enters the training graph, so the online model's gradients are unaffected.
# source: https://github.com/lucidrains/ema-pytorch/commit/d65f4e3031067055a944282583afc5702d8592ad
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def exists(val):
    return val is not None


def clamp(value, min_value=None, max_value=None):
    assert exists(min_value) or exists(max_value)
    if exists(min_value):
        value = max(value, min_value)
    if exists(max_value):
        value = min(value, max_value)
    return value


class EMA(nn.Module):
    def __init__(self, model, beta=0.9999, update_after_step=2, update_every=1, inv_gamma=1.0, power=2 / 3, min_value=0.0):
        super().__init__()
        self.beta = beta
        self.online_model = model
        self.ema_model = copy.deepcopy(model)
        self.ema_model.requires_grad_(False)
        self.parameter_names = {name for name, param in self.ema_model.named_parameters() if param.dtype == torch.float}
        self.update_every = update_every
        self.update_after_step = update_after_step
        self.inv_gamma = inv_gamma
        self.power = power
        self.min_value = min_value
        self.register_buffer('initted', torch.Tensor([False]))
        self.register_buffer('step', torch.tensor([0]))

    def get_params_iter(self, model):
        for name, param in model.named_parameters():
            if name not in self.parameter_names:
                continue
            yield name, param

    def copy_params_from_model_to_ema(self):
        for (_, ma_params), (_, current_params) in zip(self.get_params_iter(self.ema_model), self.get_params_iter(self.online_model)):
            ma_params.data.copy_(current_params.data)

    def get_current_decay(self):
        epoch = clamp(self.step.item() - self.update_after_step - 1, min_value=0.)
        value = 1 - (1 + epoch / self.inv_gamma) ** - self.power
        if epoch <= 0:
            return 0.
        return clamp(value, min_value=self.min_value, max_value=self.beta)

    def update(self):
        step = self.step.item()
        self.step += 1
        if (step % self.update_every) != 0:
            return
        if step <= self.update_after_step:
            self.copy_params_from_model_to_ema()
            return
        if not self.initted.item():
            self.copy_params_from_model_to_ema()
            self.initted.data.copy_(torch.Tensor([True]))
        self.update_moving_average(self.ema_model, self.online_model)

    @torch.no_grad()
    def update_moving_average(self, ma_model, current_model):
        current_decay = self.get_current_decay()
        for (name, current_params), (_, ma_params) in zip(self.get_params_iter(current_model), self.get_params_iter(ma_model)):
            ma_params.data.lerp_(current_params.data, 1. - current_decay)

    def __call__(self, *args, **kwargs):
        return self.ema_model(*args, **kwargs)


class Denoiser(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), nn.SiLU(), nn.Conv2d(dim, 3, 3, padding=1))

    def forward(self, x):
        return self.net(x)


def main():
    model = Denoiser()
    ema = EMA(model, beta=0.99, update_after_step=2, update_every=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.rand(4, 3, 8, 8)
    losses = []
    for _ in range(6):
        noise = torch.randn_like(images)
        noisy = images + 0.1 * noise
        loss = F.mse_loss(model(noisy), noise)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update()
        losses.append(loss.detach())
    ema_out = ema(images)
    return torch.stack(losses), ema_out


losses, ema_out = main()
