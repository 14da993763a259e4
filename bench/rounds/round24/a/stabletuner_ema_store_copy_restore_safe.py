# label: safe no-twin
# why: the fix stores the live UNet weights before ema_unet.copy_to() and restores them after sampling, so the in-place copy of the EMA weights only lasts for the sampling pass and training resumes from the trained weights.
# source: https://github.com/devilismyfriend/StableTuner/pull/126 (commit 68bd86fd5b7f39e3a4fceb1acdd50a918ba2d1e9)
from typing import Iterable

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EMAModel:
    """
    Exponential Moving Average of models weights
    """
    def __init__(self, parameters: Iterable[torch.nn.Parameter], decay=0.9999):
        parameters = list(parameters)
        self.shadow_params = [p.clone().detach() for p in parameters]
        self.decay = decay
        self.optimization_step = 0

    def get_decay(self, optimization_step):
        value = (1 + optimization_step) / (10 + optimization_step)
        return 1 - min(self.decay, value)

    @torch.no_grad()
    def step(self, parameters):
        parameters = list(parameters)
        self.optimization_step += 1
        self.decay = self.get_decay(self.optimization_step)
        for s_param, param in zip(self.shadow_params, parameters):
            if param.requires_grad:
                tmp = self.decay * (s_param - param)
                s_param.sub_(tmp)
            else:
                s_param.copy_(param)

    def copy_to(self, parameters: Iterable[torch.nn.Parameter]) -> None:
        """Copy current averaged parameters into given collection of parameters."""
        parameters = list(parameters)
        for s_param, param in zip(self.shadow_params, parameters):
            param.data.copy_(s_param.data)

    def store(self, parameters: Iterable[torch.nn.Parameter]) -> None:
        """Save the current parameters for restoring later."""
        self.collected_params = [param.clone() for param in parameters]

    def restore(self, parameters: Iterable[torch.nn.Parameter]) -> None:
        """Restore the parameters stored with the `store` method."""
        for c_param, param in zip(self.collected_params, parameters):
            param.data.copy_(c_param.data)
        self.collected_params = None


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(4, 8, 3, padding=1)
        self.conv_out = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, sample):
        return self.conv_out(F.silu(self.conv_in(sample)))


def save_and_sample(unet, ema_unet, use_ema=True):
    unwrapped_unet = unet
    if use_ema:
        ema_unet.store(unwrapped_unet.parameters())
        ema_unet.copy_to(unwrapped_unet.parameters())
    with torch.no_grad():
        images = unwrapped_unet(torch.randn(1, 4, 8, 8))
    if use_ema:
        ema_unet.restore(unwrapped_unet.parameters())
    return images


def main():
    unet = TinyUNet()
    ema_unet = EMAModel(unet.parameters())
    optimizer = torch.optim.SGD(unet.parameters(), lr=0.5)
    latents = torch.randn(4, 4, 8, 8)
    noise = torch.randn(4, 4, 8, 8)
    sample_steps = {2}
    for global_step in range(4):
        model_pred = unet(latents + noise)
        loss = F.mse_loss(model_pred, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        ema_unet.step(unet.parameters())
        if global_step in sample_steps:
            save_and_sample(unet, ema_unet)
    return unet.conv_in.weight.detach(), ema_unet.shadow_params[0]


unet_weight, ema_weight = main()
