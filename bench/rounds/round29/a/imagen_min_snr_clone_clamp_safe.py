# label: safe
# why: maybe_clipped_snr is a clone of snr, so clamp_(max=min_snr_gamma) caps only the copy and the later division by the untouched snr yields the intended min-SNR loss weight; snr comes from exp() of a non-learned schedule, so nothing saved for backward is touched.
# source: https://github.com/lucidrains/imagen-pytorch/commit/3143da1fdb5f74bfc1410e7e36e3e7b4a639611b (fix min snr logic; imagen_pytorch/imagen_pytorch.py p_losses)
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def log_snr_cosine(t, s=0.008):
    return -torch.log((torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** -2) - 1).clamp(min=-20.)


class TinyUnet(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.conv_in = nn.Conv2d(3, dim, 3, padding=1)
        self.time_mlp = nn.Linear(1, dim)
        self.conv_out = nn.Conv2d(dim, 3, 3, padding=1)

    def forward(self, x, noise_cond):
        h = self.conv_in(x) + self.time_mlp(noise_cond[:, None])[:, :, None, None]
        return self.conv_out(F.silu(h))


class Imagen(nn.Module):
    def __init__(self, min_snr_loss_weight=True, min_snr_gamma=5.):
        super().__init__()
        self.unet = TinyUnet()
        self.min_snr_gamma = min_snr_gamma if min_snr_loss_weight else None
        self.loss_fn = F.mse_loss

    def p_losses(self, x_start, times, noise, pred_objective='noise'):
        log_snr = log_snr_cosine(times)
        alpha = torch.sigmoid(log_snr).sqrt()[:, None, None, None]
        sigma = torch.sigmoid(-log_snr).sqrt()[:, None, None, None]
        x_noisy = alpha * x_start + sigma * noise
        noise_cond = log_snr

        pred = self.unet(x_noisy, noise_cond)

        if pred_objective == 'noise':
            target = noise
        elif pred_objective == 'x_start':
            target = x_start
        else:
            target = alpha * noise - sigma * x_start

        losses = self.loss_fn(pred, target, reduction='none')
        losses = losses.mean(dim=(1, 2, 3))

        # min snr loss reweighting

        snr = log_snr.exp()
        maybe_clipped_snr = snr.clone()

        if self.min_snr_gamma is not None:
            maybe_clipped_snr.clamp_(max=self.min_snr_gamma)

        if pred_objective == 'noise':
            loss_weight = maybe_clipped_snr / snr
        elif pred_objective == 'x_start':
            loss_weight = maybe_clipped_snr
        else:
            loss_weight = maybe_clipped_snr / (snr + 1)

        losses = losses * loss_weight
        return losses.mean()


def main():
    imagen = Imagen()
    images = torch.randn(4, 3, 8, 8)
    times = torch.tensor([0.05, 0.2, 0.5, 0.9])
    noise = torch.randn_like(images)
    loss = imagen.p_losses(images, times, noise)
    loss.backward()
    return loss.detach(), imagen.unet.conv_in.weight.grad.clone()


loss, grad = main()
